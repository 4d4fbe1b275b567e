// slurm/jobs.hpp: the Slurm command lines rv builds for a job it has, and the final state of one that
// ended (slurm/monitor's final_state), asked at the poller's cadence.
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"
#include "slurm/jobs.hpp"
#include "slurm/monitor.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace rv;
using namespace rv::slurm;
using rv::test::FakeClock;
using rv::test::FakeRunner;
using Argv = std::vector<std::string>;

TEST_CASE("jobs: a step in the allocation: one node, a node list, labelled tasks, a terminal")
{
  StepOptions one;
  one.job_id = "1301";
  CHECK(step_argv(one, {"bash", "-c", "x"}) ==
        Argv{"srun", "--jobid=1301", "--overlap", "--nodes=1", "--ntasks=1", "bash", "-c", "x"});
  one.pty = true;
  one.nodelist = {"a100-2"};
  CHECK(step_argv(one, {"bash", "-l"}) == Argv{"srun", "--jobid=1301", "--overlap", "--nodes=1", "--ntasks=1",
                                               "--nodelist=a100-2", "--pty", "bash", "-l"});
  StepOptions all;
  all.job_id = "77";
  all.nodes = 2;
  all.labelled = true;
  all.nodelist = {"n1", "n2"};
  CHECK(step_argv(all, {"true"}) == Argv{"srun", "--jobid=77", "--overlap", "--nodes=2", "--ntasks=2",
                                         "--ntasks-per-node=1", "--label", "--quiet", "--nodelist=n1,n2", "true"});
  // The program's words stay words: nothing is joined or quoted here.
  CHECK(step_argv(one, {"a b", "$x"}).back() == "$x");
}

TEST_CASE("jobs: an rv run --in step: its name, its listing, its cancel, started in the background")
{
  StepOptions o;
  o.job_id = "88";
  o.nodes = 2;
  o.labelled = true;
  o.name = "rv-ab12cd34.step-3";
  CHECK(step_argv(o, {"bash", "-c", "p"}) == Argv{"srun", "--jobid=88", "--overlap", "--nodes=2", "--ntasks=2",
                                                  "--ntasks-per-node=1", "--label", "--quiet",
                                                  "--job-name=rv-ab12cd34.step-3", "bash", "-c", "p"});
  CHECK(steps_argv("88") == Argv{"squeue", "-h", "--steps", "-j", "88", "-o", "%i|%M|%N|%j"});
  CHECK(cancel_step_argv("88", "4") == Argv{"scancel", "88.4"});
  // The argv stays words after sh's own: "$@" hands them over unjoined.
  const auto d = detached_argv({"srun", "a b", "$x"});
  REQUIRE(d.size() == 7);
  CHECK(d[0] == "sh");
  CHECK(d[2].find("setsid nohup \"$@\"") == 0);
  CHECK(Argv(d.begin() + 4, d.end()) == Argv{"srun", "a b", "$x"});

  // squeue --steps rows: numbered steps, batch and extern, a name with a `|`; junk skipped.
  const auto steps = parse_steps("88.batch|1:02|a6000-1|batch\n"
                                 "88.extern|1:02|a6000-1|extern\n"
                                 "88.4|12:03|a6000-[1-2]|rv-ab12cd34.step-3\n"
                                 "88.5|1-02:00:00|a6000-1|odd|name\n"
                                 "no rows here\n"
                                 "|1:00|x|y\n");
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].step_id == "batch");
  CHECK(steps[2].job_id == "88");
  CHECK(steps[2].step_id == "4");
  CHECK(steps[2].elapsed_s == 12 * 60 + 3);
  CHECK(steps[2].nodes == "a6000-[1-2]");
  CHECK(steps[2].name == "rv-ab12cd34.step-3");
  CHECK(steps[3].elapsed_s == 26 * 3600);
  CHECK(steps[3].name == "odd|name");
  CHECK(parse_steps("").empty());
}

TEST_CASE("jobs: scontrol lookups and the doctor's test job")
{
  CHECK(show_job_argv("12") == Argv{"scontrol", "show", "job", "12"});
  CHECK(show_job_argv("12", true) == Argv{"scontrol", "-o", "show", "job", "12"});
  CHECK(show_node_argv("a100-1") == Argv{"scontrol", "-o", "show", "node", "a100-1"});
  CHECK(test_job_argv({"gpu-a100", "rv-doctor", 2, 120}, {"true"}) ==
        Argv{"srun", "--partition=gpu-a100", "--nodes=1", "--ntasks=1", "--gres=gpu:1", "--time=2", "--immediate=120",
             "--job-name=rv-doctor", "true"});
  CHECK(std::find(required_commands().begin(), required_commands().end(), "sbatch") != required_commands().end());
  CHECK(std::find(accounting_commands().begin(), accounting_commands().end(), "sacct") != accounting_commands().end());
}

namespace {
bool is_sacct(const Argv& a)
{
  return std::find(a.begin(), a.end(), "sacct") != a.end();
}
} // namespace

TEST_CASE("final_state: scontrol first, accounting when the controller forgot, at the following cadence")
{
  // Captured on the testbed: COMPLETED, ExitCode=0:0.
  std::ifstream in(std::filesystem::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "scontrol_show_job.completed.txt");
  const std::string completed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  {
    FakeRunner r;
    FakeClock clock;
    r.expect_prefix({"scontrol", "show", "job", "2"}, FakeRunner::reply(0, completed));
    r.expect(is_sacct, FakeRunner::reply(0, ""));
    auto v = final_state(r, clock, "2");
    REQUIRE(v);
    CHECK(v->state == JobState::completed);
    CHECK(v->source == "scontrol");
    CHECK(clock.slept_ms() == 0);
  }
  // The controller has forgotten it and accounting lags once: one wait of the following cadence,
  // then sacct's FAILED 3:0.
  FakeRunner r;
  FakeClock clock;
  r.expect_prefix({"scontrol", "show", "job", "9"}, FakeRunner::reply(1, "", "Invalid job id specified"));
  r.expect(is_sacct, FakeRunner::reply(0, ""));
  r.expect_prefix({"scontrol", "show", "job", "9"}, FakeRunner::reply(1, "", "Invalid job id specified"));
  r.expect(is_sacct, FakeRunner::reply(0, "9|FAILED|3:0|00:00:04|2026-11-22T04:00:00|2026-11-22T04:00:04|a100-2|"
                                          "billing=1|gpu-a100|rv-x\n"));
  auto v = final_state(r, clock, "9");
  REQUIRE(v);
  CHECK(r.unexpected().empty());
  CHECK(v->state == JobState::failed);
  CHECK(v->exit_status == 3);
  CHECK(v->elapsed_s == 4);
  CHECK(v->source == "sacct");
  CHECK(clock.slept_ms() == Backoff::following().initial.count());
}

TEST_CASE("final_state: neither scontrol nor sacct ever knows it: a timeout error after its polls, not a guess")
{
  FakeRunner r;
  FakeClock clock;
  for (int i = 0; i < k_final_state_polls; ++i) {
    r.expect_prefix({"scontrol", "show", "job", "5"}, FakeRunner::reply(1, "", "Invalid job id specified"));
    r.expect(is_sacct, FakeRunner::reply(0, ""));
  }
  auto v = final_state(r, clock, "5");
  REQUIRE_FALSE(v);
  CHECK(v.error().code == ErrorCode::timeout);
  CHECK(v.error().message.find("neither scontrol nor sacct") != std::string::npos);
  CHECK(r.all_consumed());
  // 1 s, 2 s, then every 3 s: the poller's cadence, not a fixed second.
  CHECK(clock.slept_ms() == 1000 + 2000 + 3000 * (k_final_state_polls - 2));
}
