// The in-job GPU preflight (templates/preflight.cpp), run for real: the rendered check against the
// testbed's stand-in nvidia-smi (testbed/nvidia-smi, real formats) with each injectable fault, and a
// whole rendered job script that must end with exit 96 before the user's command runs.

#include "exec_fixture.hpp"
#include "fake_node.hpp"

#include "templates/preflight.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace rv::templates;
using namespace rv::templates::testing;
namespace fs = std::filesystem;

namespace {

const std::string k_two_a100 =
    "0|NVIDIA A100-SXM4-80GB|GPU-90095414-dacb-e9ba-fb13-1678e28dc82c|81920|00000000:07:00.0||0\n"
    "1|NVIDIA A100-SXM4-80GB|GPU-fb38853b-ad8a-ea5d-8e04-01ce97652247|81920|00000000:17:00.0||0\n";

} // namespace

TEST_CASE("preflight: a healthy node passes and names its GPUs, driver and time")
{
  FakeNode node(k_two_a100);
  node.set("driver", "550.54.15");
  CHECK(node.check("SLURM_JOB_GPUS=0,1") == 0);
  CHECK(node.out().starts_with("rv preflight: ok node=n1 gpus=2/2 driver=550.54.15 time_ms="));
}

TEST_CASE("preflight: each injected fault fails the node with its reason")
{
  struct Fault {
    const char* fault;
    const char* reason;
  };
  for (auto f : {Fault{"nodevices", "reason=nvidia-smi: No devices were found"},
                 Fault{"mismatch", "reason=nvidia-smi: Driver/library version mismatch"},
                 Fault{"fallen", "reason=nvidia-smi: GPU has fallen off the bus"},
                 Fault{"nodriver", "reason=nvidia-smi: couldn't communicate with the NVIDIA driver"},
                 Fault{"ecc", "reason=GPU 0 reports 2 uncorrectable ECC error(s)"},
                 Fault{"hang", "reason=nvidia-smi -L did not answer within 1 s"}}) {
    CAPTURE(f.fault);
    FakeNode node(k_two_a100);
    node.set("fault", f.fault);
    CHECK(node.check("SLURM_JOB_GPUS=0,1 RV_PREFLIGHT_TIMEOUT=1") == 1);
    CHECK(node.out().starts_with("rv preflight: FAIL node=n1 "));
    CHECK(node.out().find(f.reason) != std::string::npos);
  }
}

TEST_CASE("preflight: fewer GPUs visible than granted, or a UUID nvidia-smi does not list, fails")
{
  FakeNode one("0|NVIDIA A100-SXM4-80GB|GPU-90095414-dacb-e9ba-fb13-1678e28dc82c|81920|00000000:07:00.0||0\n");
  CHECK(one.check("SLURM_JOB_GPUS=0,1") == 1);
  CHECK(one.out().find("reason=Slurm granted 2 GPU(s) (0,1) but nvidia-smi lists 1") != std::string::npos);

  FakeNode two(k_two_a100);
  CHECK(two.check("SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=GPU-00000000-dead-beef-0000-000000000000") == 1);
  CHECK(two.out().find("names GPU-00000000-dead-beef") != std::string::npos);
  CHECK(two.check("SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=GPU-90095414-dacb-e9ba-fb13-1678e28dc82c") == 0);
}

TEST_CASE("preflight: MIG instances count as the job's devices")
{
  FakeNode mig("0|NVIDIA A100-SXM4-80GB|GPU-9807e094-4629-5785-b892-f45f40fdff74|81920|00000000:07:00.0|1g.10gb|7\n");
  CHECK(mig.check("SLURM_JOB_GPUS=3") == 0);
  CHECK(mig.out().find("gpus=7/1") != std::string::npos);
}

TEST_CASE("preflight: no nvidia-smi is a skip, unless the profile requires the check")
{
  FakeNode node(k_two_a100);
  CHECK(node.check("SLURM_JOB_GPUS=0", "", false, false) == 0);
  CHECK(node.out().starts_with("rv preflight: skip node=n1 reason=nvidia-smi is not on PATH"));
  CHECK(node.check("SLURM_JOB_GPUS=0", "", true, false) == 1);
  CHECK(node.out().find("FAIL node=n1 reason=nvidia-smi is not on PATH (the site profile requires") !=
        std::string::npos);
  CHECK(node.check("") == 0); // no GPUs granted: nothing to check
  CHECK(node.out().starts_with("rv preflight: skip node=n1 reason=no GPUs granted"));
}

TEST_CASE("preflight: the site profile's own check runs, and its failure fails the node")
{
  FakeNode node(k_two_a100);
  CHECK(node.check("SLURM_JOB_GPUS=0", "test -e /nonexistent-rv-check || { echo 'IB port down'; exit 3; }") == 1);
  CHECK(node.out().find("reason=the site check exited 3: IB port down") != std::string::npos);
  CHECK(node.check("SLURM_JOB_GPUS=0", "true") == 0);
}

TEST_CASE("preflight: a failing node ends the job with exit 96 before anything of the user's runs")
{
  FakeNode node(k_two_a100);
  node.set("fault", "nodevices");
  auto o = node.options();
  o.command = "touch '" + node.path("marker") + "'";
  o.setup = "touch '" + node.path("setup-ran") + "'";
  auto script = render(base_strategy(), base_request(), o);
  REQUIRE(script.has_value());
  CHECK(ExecFixture::sh("bash -n '" + node.write_script("job", *script) + "'") == 0);
  const auto env = node.job_env("501", "TB_DIR='" + node.dir.string() + "' SLURMD_NODENAME=n1 SLURM_JOB_GPUS=0,1");
  const auto with_smi = "PATH='" + node.path("bin") + ":" RV_SOURCE_DIR "/tests/fakes/bin:/usr/bin:/bin' ";
  const int status = ExecFixture::sh(env + with_smi + "bash '" + node.path("job.sbatch") + "' >'" + node.path("o") +
                                     "' 2>'" + node.path("e") + "'");
  CHECK(status == 96);
  CHECK_FALSE(fs::exists(node.path("marker")));
  CHECK_FALSE(fs::exists(node.path("setup-ran")));
  CHECK(node.read("e").find("rv preflight: FAIL node=n1 reason=nvidia-smi: No devices were found\n") !=
        std::string::npos);
  // The verdict file, which only the preflight writes, names the node and the reason (N2).
  const auto verdict = preflight_verdict_path(o.remote_root, o.request_id, "501");
  CHECK(rv::testing::read_text(verdict) == "rv preflight: FAIL node=n1 reason=nvidia-smi: No devices were found\n");

  // The same job on a healthy node runs the command; --no-preflight renders no check at all.
  node.set("fault", "");
  CHECK(ExecFixture::sh(env + with_smi + "bash '" + node.path("job.sbatch") + "' >/dev/null 2>&1") == 0);
  CHECK(fs::exists(node.path("marker")));
  o.preflight = false;
  CHECK(render(base_strategy(), base_request(), o)->find("_rv_pf_node") == std::string::npos);
  auto cpu = base_strategy();
  cpu.gres.clear();
  cpu.gpus_per_node = 0;
  o.preflight = true;
  CHECK(render(cpu, base_request(), o)->find("_rv_pf_node") == std::string::npos);
}

TEST_CASE("preflight: a command that exits 96 itself leaves no verdict file, so rv never reruns it (N2)")
{
  FakeNode node(k_two_a100);
  auto o = node.options();
  o.command = "touch '" + node.path("marker") + "'; exit 96";
  auto script = render(base_strategy(), base_request(), o);
  REQUIRE(script.has_value());
  node.write_script("job", *script);
  const auto env = node.job_env("502", "TB_DIR='" + node.dir.string() + "' SLURMD_NODENAME=n1 SLURM_JOB_GPUS=0,1");
  const auto with_smi = "PATH='" + node.path("bin") + ":" RV_SOURCE_DIR "/tests/fakes/bin:/usr/bin:/bin' ";
  CHECK(ExecFixture::sh(env + with_smi + "bash '" + node.path("job.sbatch") + "' >/dev/null 2>&1") == 96);
  CHECK(fs::exists(node.path("marker")));
  CHECK_FALSE(fs::exists(preflight_verdict_path(o.remote_root, o.request_id, "502")));
}
