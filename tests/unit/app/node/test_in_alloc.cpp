// app/node/in_alloc.hpp's pure parts: the --time check, the strategy read back from the record's
// plan, and the srun line of a step.
#include "app/node/in_alloc.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;
using Argv = std::vector<std::string>;

TEST_CASE("in_alloc: --time must fit in what is left of the allocation")
{
  CHECK(check_time_left(1800, 3600, 600, "ab12", "77").has_value()); // 50m left
  CHECK(check_time_left(3000, 3600, 600, "ab12", "77").has_value()); // exactly what is left
  CHECK(check_time_left(99999, -1, 600, "ab12", "77").has_value());  // UNLIMITED
  auto e = check_time_left(3600, 3600, 600, "ab12", "77");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == ErrorCode::usage);
  CHECK(e.error().message == "--time 1h is longer than the 50m left of allocation 77 (request ab12)");
  CHECK(e.error().hint == "ask for 50m or less, or hold a longer one: rv up --keep --time 1h");
  auto ending = check_time_left(120, 600, 590, "ab12", "77");
  REQUIRE_FALSE(ending.has_value());
  CHECK(ending.error().hint.find("about to end") != std::string::npos);
  CHECK_FALSE(check_time_left(60, 600, 900, "ab12", "77").has_value()); // past its limit: nothing left
}

TEST_CASE("in_alloc: the allocation's strategy from the record's plan")
{
  nlohmann::json plan = {{"strategies",
                          {{{"id", "s1"}, {"nodes", 1}, {"gpus_per_node", 1}},
                           {{"id", "s2"},
                            {"gpu_type", "a6000"},
                            {"partition", "gpu-a6000"},
                            {"gres", "gpu:a6000:2"},
                            {"nodes", 2},
                            {"gpus_per_node", 2},
                            {"cpus_per_task", 8},
                            {"mem_mb", 4096},
                            {"walltime_s", 1800},
                            {"kind", "direct"}}}}};
  auto s = strategy_from_plan(plan, "s2");
  REQUIRE(s.has_value());
  CHECK(s->nodes == 2);
  CHECK(s->gpus_per_node == 2);
  CHECK(s->cpus_per_task == 8);
  CHECK(s->gres == "gpu:a6000:2");
  CHECK(s->walltime_s == 1800);
  CHECK(s->mem_mb_per_node == 4096);
  CHECK_FALSE(strategy_from_plan(plan, "s9").has_value());
  CHECK_FALSE(strategy_from_plan(nlohmann::json(), "s1").has_value());
  CHECK_FALSE(strategy_from_plan({{"strategies", {{{"id", "s1"}, {"nodes", "two"}}}}}, "s1").has_value());
}

TEST_CASE("in_alloc: the step's srun: every node labelled, or one task with --one, the program one word")
{
  const std::string program = "echo 'a b' \"$X\" `y`\nexit 7";
  CHECK(in_step_argv("91", 2, true, "rv-x.step-1", program) ==
        Argv{"srun", "--jobid=91", "--overlap", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--label", "--quiet",
             "--job-name=rv-x.step-1", "bash", "-c", program});
  CHECK(in_step_argv("91", 2, false, "rv-x.step-2", program) == Argv{"srun", "--jobid=91", "--overlap", "--nodes=1",
                                                                     "--ntasks=1", "--job-name=rv-x.step-2", "bash",
                                                                     "-c", program});
  CHECK(in_step_argv("91", 1, true, "rv-x.step-3", "p") == Argv{"srun", "--jobid=91", "--overlap", "--nodes=1",
                                                                "--ntasks=1", "--job-name=rv-x.step-3", "bash", "-c",
                                                                "p"});
}

// rv up --container's allocation: its shell runs in the image; a step rv run --in adds would run on
// the node (no image, another Python), so it is refused, saying so, before anything is synced.
TEST_CASE("in_alloc: a request that runs in a container is not joined by a step outside it")
{
  model::JobRequest plain;
  CHECK(check_not_container(plain, "ab12").has_value());
  model::JobRequest ct;
  ct.container = model::ContainerOrder{{model::ImageKind::docker, "docker://ubuntu:22.04"}, {}};
  auto e = check_not_container(ct, "ab12");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == ErrorCode::usage);
  CHECK(e.error().message == "request ab12 runs its command in a container (docker://ubuntu:22.04): rv run --in "
                             "would run this one on the node, outside it");
  CHECK(e.error().hint.find("rv run --container IMAGE CMD") != std::string::npos);
}
