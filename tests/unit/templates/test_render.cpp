#include "templates/render.hpp"

#include "cases.hpp"
#include "golden.hpp"

#include <doctest/doctest.h>

using namespace rv::templates;
using rv::templates::testing::golden_cases;

TEST_CASE("templates: every case matches its golden file")
{
  for (const auto& c : golden_cases()) {
    SUBCASE(c.name.c_str())
    {
      auto script = render(c.strategy, c.request, c.options);
      REQUIRE_MESSAGE(script.has_value(), script.error().message);
      rv::testing::check_golden(std::string(RV_TEST_DATA_DIR) + "/templates/" + c.name + ".sbatch.golden",
                                *script);
    }
  }
}

TEST_CASE("templates: #SBATCH lines come from the strategy and request")
{
  auto c = golden_cases().front();
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.starts_with("#!/bin/bash\n"));
  CHECK(script.find("#SBATCH --partition=\"gpu-a100\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --gres=\"gpu:a100:2\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --constraint=\"a100_80gb&nvlink|\\\"odd\\\"\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --exclude=\"a100-3,a100-4\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --mem=\"65536M\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --time=\"02:00:00\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --comment=\"rv:r20261122-ab12\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --output=\"/scratch/alice/.rv/logs/%x-%j.out\"\n") != std::string::npos);
  CHECK(script.find("#SBATCH --requeue") == std::string::npos);
  // torchrun with 2 GPUs per node: 16 CPUs shared by 2 ranks.
  CHECK(script.find("export OMP_NUM_THREADS=8 ") != std::string::npos);
  CHECK(script.find("--master_port=\"$MASTER_PORT\"") != std::string::npos);
}

TEST_CASE("templates: untyped strategies ask for GPUs per node")
{
  auto c = golden_cases().front();
  c.strategy.gres.clear();
  c.strategy.gpu_type.clear();
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("#SBATCH --gpus-per-node=\"2\"\n") != std::string::npos);
  CHECK(script.find("--gres") == std::string::npos);
}

TEST_CASE("templates: a plain command gets all CPUs as OpenMP threads")
{
  auto c = golden_cases().front();
  c.options.command = "python train.py";
  auto script = render(c.strategy, c.request, c.options).value();
  CHECK(script.find("export OMP_NUM_THREADS=16 ") != std::string::npos);
}

TEST_CASE("templates: checkpoint scripts signal the batch shell and requeue")
{
  for (const auto& c : golden_cases()) {
    if (c.name != "checkpoint_requeue") {
      continue;
    }
    auto script = render(c.strategy, c.request, c.options).value();
    CHECK(script.find("#SBATCH --signal=\"B:USR1@300\"\n") != std::string::npos);
    CHECK(script.find("#SBATCH --requeue\n") != std::string::npos);
    CHECK(script.find("#SBATCH --open-mode=\"append\"\n") != std::string::npos);
    CHECK(script.find("export RV_TOTAL_REQUESTED_S=43200\n") != std::string::npos);
    CHECK(script.find("scontrol requeue \"$SLURM_JOB_ID\"") != std::string::npos);
  }
}

TEST_CASE("templates: the signal lead leaves room for Slurm's jitter")
{
  CHECK(effective_signal_lead(4 * 3600, 300).value() == 300);
  CHECK(effective_signal_lead(240, 600).value() == 150); // 240 - 60 jitter - 30 run
  CHECK(effective_signal_lead(120, 600).value() == 30);
  CHECK_FALSE(effective_signal_lead(119, 600).has_value());
  CHECK_FALSE(effective_signal_lead(3600, 10).has_value());
}
