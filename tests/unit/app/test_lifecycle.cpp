// The request lifecycle end to end against a scripted cluster: submit (with refusals), the race,
// following the winner, and what the record and the secrets file look like on each exit path.
// Every effect comes through an app::Env built from fakes: no cluster, no clock, no terminal.

#include "app/launch.hpp"
#include "app/manage.hpp"
#include "app/race.hpp"
#include "app/submit.hpp"
#include "core/interrupt.hpp"
#include "core/process/local_runner.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/captured_job.hpp"
#include "fakes/fake_clock.hpp"
#include "unit/templates/cases.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <deque>
#include <fstream>
#include <functional>
#include <optional>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::CaptureOutput;
using rv::test::FakeClock;
using rv::test::scontrol_job;

namespace {

bool has(const std::vector<std::string>& argv, const std::string& word)
{
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

bool mentions(const std::vector<std::string>& argv, const std::string& part)
{
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

// A cluster scripted step by step: each step matches one command and answers it, or fails the
// transport (an SSH drop, an interrupt). What rv sent (argv and stdin) is kept for assertions.
class Cluster final : public proc::Runner {
public:
  using Matcher = std::function<bool(const std::vector<std::string>&)>;
  void on(Matcher m, proc::Outcome o) { m_steps.push_back({std::move(m), std::move(o)}); }
  void on(Matcher m, Error e) { m_steps.push_back({std::move(m), std::unexpected(std::move(e))}); }
  static proc::Outcome ok(std::string out = {}) { return reply(0, std::move(out)); }
  static proc::Outcome reply(int code, std::string out = {}, std::string err = {})
  {
    proc::Outcome o;
    o.exit_code = code;
    o.out = std::move(out);
    o.err = std::move(err);
    return o;
  }

  // Answers the commands no scripted step matches (discovery, probes), when set.
  std::function<std::optional<proc::Outcome>(const std::vector<std::string>&)> fallback;

  Result<proc::Outcome> run(const proc::Command& cmd) override
  {
    ++m_round_trips;
    seen.push_back(cmd.argv);
    stdin_seen.push_back(cmd.stdin_data.value_or(""));
    if ((m_steps.empty() || !m_steps.front().match(cmd.argv)) && fallback) {
      if (auto answer = fallback(cmd.argv)) {
        return *answer;
      }
    }
    if (m_steps.empty() || !m_steps.front().match(cmd.argv)) {
      unexpected.push_back(fmt::format("{}", fmt::join(cmd.argv, " ")).substr(0, 200));
      return fail(ErrorCode::generic, "scripted cluster: unexpected command " + cmd.argv.front());
    }
    auto step = std::move(m_steps.front());
    m_steps.pop_front();
    return step.answer;
  }
  std::string where() const override { return "scripted"; }
  bool done() const { return m_steps.empty(); }

  std::vector<std::vector<std::string>> seen;
  std::vector<std::string> stdin_seen;
  std::vector<std::string> unexpected;

private:
  struct Step {
    Matcher match;
    Result<proc::Outcome> answer;
  };
  std::deque<Step> m_steps;
};

// The Env of one test: a temp state directory for the request and secrets stores.
struct World {
  std::filesystem::path dir;
  Cluster cluster;
  Cluster local;
  FakeClock clock;
  store::RecordStore requests;
  secrets::Store secrets;
  Settings settings; // the defaults (remote_root ~/.rv)
  CaptureOutput output;
  Env env;

  explicit World(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-lifecycle-{}-{}", name, ::getpid())),
        requests((std::filesystem::remove_all(dir), dir / "requests")), secrets(dir / "secrets.json"),
        env{cluster, local, clock, requests, secrets, settings, output, false, 0, "/home/alice", dir}
  {}
  ~World() { std::filesystem::remove_all(dir); }

  // The one stored record (there must be exactly one).
  nlohmann::json record()
  {
    auto all = requests.list();
    REQUIRE(all);
    REQUIRE(all->size() == 1);
    return all->front();
  }
};

// Two strategies, best first: a100 (s1) and v100 (s2), job name "train".
PlanRun two_strategies()
{
  PlanRun p;
  p.request = templates::testing::base_request();
  auto s1 = templates::testing::base_strategy();
  auto s2 = s1;
  s2.id = "s2";
  s2.gpu_type = "v100";
  s2.partition = "gpu-v100";
  s2.gres = "gpu:v100:2";
  p.plan.strategies = {s1, s2};
  return p;
}

// prepare_remote: the login node answers with rv's root and cache directories.
void expect_prepare(Cluster& c)
{
  c.on([](const auto& a) { return has(a, "rv-prepare"); }, Cluster::ok("/home/alice/.rv\n/home/alice/.rv/cache\n"));
}

// sbatch --parsable for one strategy: a job id, or Slurm's refusal.
void expect_sbatch(Cluster& c, const std::string& job_id, const std::string& refusal = {})
{
  c.on([](const auto& a) { return has(a, "sbatch"); },
       refusal.empty() ? Cluster::ok(job_id + "\n")
                       : Cluster::reply(1, "", "sbatch: error: Batch job submission failed: " + refusal + "\n"));
}

// One squeue row; `elapsed` is the run time (0:00 = never started).
std::string squeue_row(const std::string& id, const std::string& state, const std::string& nodes,
                       const std::string& elapsed = "0:05")
{
  return fmt::format("{}|{}|None|p|{}|1|N/A|N/A|2:00:00|{}|N/A|train\n", id, state, nodes, elapsed);
}

} // namespace

TEST_CASE("lifecycle: a refused strategy is recorded with Slurm's reason; the others are submitted")
{
  World w("refused");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "", "Invalid account or account/partition combination specified");
  expect_sbatch(w.cluster, "102");
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // Each sbatch got its strategy's script on stdin, never in argv.
  REQUIRE(w.cluster.stdin_seen.size() == 3);
  CHECK(w.cluster.stdin_seen[1].find("#SBATCH --partition=\"gpu-a100\"") != std::string::npos);
  CHECK(w.cluster.stdin_seen[2].find("#SBATCH --partition=\"gpu-v100\"") != std::string::npos);
  CHECK(w.cluster.stdin_seen[2].find("python train.py") != std::string::npos);
  const auto& rec = launched->rec;
  CHECK(rec.state == "submitted");
  CHECK(rec.job_ids() == std::vector<std::string>{"102"});
  CHECK(rec.jobs[0].state == "REFUSED");
  CHECK(rec.jobs[0].error == "Invalid account or account/partition combination specified");
  CHECK(rec.created_at == "2027-01-15T08:00:00Z"); // the Env's clock, not the wall clock
  auto saved = w.record();
  CHECK(saved["state"] == "submitted");
  CHECK(saved["jobs"][1]["job_id"] == "102");
  CHECK(w.output.stdout_text.find("REFUSED: Invalid account") != std::string::npos);
  CHECK(w.output.stdout_text.find("s2   102") != std::string::npos);
}

TEST_CASE("lifecycle: every strategy refused: exit 3, record failed, the secrets file removed")
{
  World w("all-refused");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "", "Requested node configuration is not available");
  expect_sbatch(w.cluster, "", "Requested node configuration is not available");
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/"); }, Cluster::ok());
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE_FALSE(launched);
  CHECK(exit_code_for(launched.error().code) == 3);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // The secret went to the cluster on stdin (never argv) before the first sbatch...
  CHECK(w.cluster.stdin_seen[0].find("s3cr3t") != std::string::npos);
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(mentions(argv, "s3cr3t"));
  }
  // ... and is gone once nothing runs: the record says so.
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
  CHECK(saved["secrets"] == nlohmann::json::array({"WANDB_API_KEY"}));
}

TEST_CASE("lifecycle: Ctrl-C during submission: the jobs sbatch created are found and cancelled")
{
  World w("ctrl-c-submit");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  RunExtras extras;
  extras.request_id = "c0ffee01";
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "201");
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); },
               Error{ErrorCode::interrupted, "interrupted by signal 2", ""});
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("201|PENDING|rv:c0ffee01|train\n777|RUNNING|(null)|train\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--name=train", "201"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/requests/c0ffee01/env"); }, Cluster::ok());
  auto launched = submit_request(w.env, planned, "python train.py", "", "run", extras);
  REQUIRE_FALSE(launched);
  CHECK(launched.error().code == ErrorCode::interrupted);
  CHECK(launched.error().message.find("cancelled 201 that sbatch had already created") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "cancelled");
  CHECK(saved["secrets_file"] == "");
  bool found = false;
  for (const auto& j : saved["jobs"]) {
    if (j["job_id"] == "201") {
      found = true;
      CHECK(j["state"] == "CANCELLED");
    }
    CHECK(j["job_id"] != "777"); // the user's unrelated job of the same name
  }
  CHECK(found);
}

TEST_CASE("lifecycle: rv run -f: the first to start wins, the sibling is cancelled, the output streams, exit 0")
{
  World w("winner");
  auto planned = two_strategies();
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "301");
  expect_sbatch(w.cluster, "302");
  // The race: s2 starts first and holds the in-job claim.
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "301,302"); },
               Cluster::ok(squeue_row("301", "PENDING", "") + squeue_row("302", "RUNNING", "v100-1")));
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok("302\n"));
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--name=train", "301"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1)); // type check
  // Following s2: its output, then squeue says it ended, the last output, the final state.
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, "train-302.out"); }, Cluster::ok("epoch 1\n"));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, "train-302.err"); }, Cluster::ok("warn\n"));
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "302"); },
               Cluster::ok(squeue_row("302", "COMPLETED", "v100-1")));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".out"); }, Cluster::ok("done\n"));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".err"); }, Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "302"); },
               Cluster::ok(scontrol_job("302", "COMPLETED", "0:0")));
  w.cluster.on([](const auto& a) { return has(a, "sacct"); }, Cluster::ok());
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.302"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.output.stdout_text.find("epoch 1\ndone\n") != std::string::npos);
  CHECK(w.output.stderr_text == "warn\n");
  auto saved = w.record();
  CHECK(saved["winner"] == "s2");
  CHECK(saved["state"] == "done");
  CHECK(saved["jobs"][1]["state"] == "COMPLETED");
  CHECK(saved["jobs"][0]["state"] == "CANCELLED");
}

TEST_CASE("lifecycle: Ctrl-C during the race cancels every sibling and records the request cancelled")
{
  World w("ctrl-c-race");
  auto planned = two_strategies();
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "401");
  expect_sbatch(w.cluster, "402");
  w.cluster.on(
      [](const auto& a) {
        if (!has(a, "squeue")) {
          return false;
        }
        rv::raise_interrupt(2); // Ctrl-C while both are pending
        return true;
      },
      Cluster::ok(squeue_row("401", "PENDING", "") + squeue_row("402", "PENDING", "")));
  w.cluster.on(
      [](const auto& a) { return has(a, "scancel") && has(a, "--name=train") && has(a, "401") && has(a, "402"); },
      Cluster::ok());
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  rv::clear_interrupt();
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::interrupted);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "cancelled");
}

namespace {

// The steps of following job `id` to its end in state `state` (exit code `code`), printing `out`.
void expect_follow(Cluster& c, const std::string& id, const std::string& state, const std::string& code,
                   const std::string& out, const std::string& err = {})
{
  c.on([id](const auto& a) { return has(a, "tail") && mentions(a, "train-" + id + ".out"); }, Cluster::ok(out));
  c.on([id](const auto& a) { return has(a, "tail") && mentions(a, "train-" + id + ".err"); }, Cluster::ok(err));
  c.on([id](const auto& a) { return has(a, "squeue") && has(a, id); }, Cluster::ok(squeue_row(id, state, "n1")));
  c.on([](const auto& a) { return has(a, "tail"); }, Cluster::ok());
  c.on([](const auto& a) { return has(a, "tail"); }, Cluster::ok());
  c.on([id](const auto& a) { return has(a, "scontrol") && has(a, id); }, Cluster::ok(scontrol_job(id, state, code)));
  c.on([](const auto& a) { return has(a, "sacct"); }, Cluster::ok());
}

// The race's first poll finds `winner` running and holding the in-job claim.
void expect_win(Cluster& c, const std::string& ids, const std::string& squeue, const std::string& winner)
{
  c.on([ids](const auto& a) { return has(a, "squeue") && has(a, ids); }, Cluster::ok(squeue));
  c.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok(winner + "\n"));
}

} // namespace

TEST_CASE("lifecycle: a tie (both start in one poll) goes to the claim holder; rv cancels the other")
{
  World w("tie");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "501");
  expect_sbatch(w.cluster, "502");
  expect_win(w.cluster, "501,502", squeue_row("501", "RUNNING", "a100-1") + squeue_row("502", "RUNNING", "v100-1"),
             "501");
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--name=train", "502"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->strategy_id == "s1");
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["winner"] == "s1");
  CHECK(saved["jobs"][1]["state"] == "CANCELLED");
}

TEST_CASE("lifecycle: a sibling that left squeue is read from scontrol, then sacct; the other wins later")
{
  World w("vanished");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "601");
  expect_sbatch(w.cluster, "602");
  // 601 is gone from squeue and from the controller: accounting says it was cancelled (by an
  // admin) before it ever started. (A sibling that started and failed would be the winner: the
  // command ran there, once.)
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "601,602"); },
               Cluster::ok(squeue_row("602", "PENDING", "")));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "601"); },
               Cluster::reply(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  w.cluster.on(
      [](const auto& a) { return has(a, "sacct") && has(a, "601"); },
      Cluster::ok("601|CANCELLED by 0|0:0|00:00:00|None|2026-11-22T05:00:03|None assigned|billing=1|gpu-a100|train\n"));
  // The next poll asks about 601 again (squeue does not know it; the controller has forgotten it),
  // and finds 602 running with the claim.
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "601,602"); },
               Cluster::ok(squeue_row("602", "RUNNING", "v100-1")));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "601"); }, Cluster::reply(1));
  w.cluster.on(
      [](const auto& a) { return has(a, "sacct") && has(a, "601"); },
      Cluster::ok("601|CANCELLED by 0|0:0|00:00:00|None|2026-11-22T05:00:03|None assigned|billing=1|gpu-a100|train\n"));
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok("602\n"));
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->job_id == "602");
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["jobs"][0]["state"] == "CANCELLED");
  CHECK(saved["winner"] == "s2");
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE(has(argv, "scancel")); // nothing left to cancel
  }
}

TEST_CASE("lifecycle: every sibling ends without starting: exit 3 with each reason, record failed, secrets gone")
{
  World w("hopeless");
  REQUIRE(w.secrets.set({{"TOKEN", "t"}}));
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "701");
  expect_sbatch(w.cluster, "702");
  w.cluster.on([](const auto& a) { return has(a, "squeue"); },
               Cluster::ok(squeue_row("701", "CANCELLED", "", "0:00") + squeue_row("702", "FAILED", "", "0:00")));
  w.cluster.on([](const auto& a) { return has(a, "rv-rm") && mentions(a, "/env"); }, Cluster::ok());
  auto rc = launch_run(w.env, two_strategies(), {"python train.py"}, "", true);
  REQUIRE_FALSE(rc);
  CHECK(exit_code_for(rc.error().code) == 3);
  CHECK(rc.error().message.find("s1 (701): CANCELLED") != std::string::npos);
  CHECK(rc.error().message.find("s2 (702): FAILED") != std::string::npos);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "failed");
  CHECK(saved["secrets_file"] == "");
}

TEST_CASE("lifecycle: Ctrl-C after the start stops following; the job keeps running and stays tracked")
{
  World w("ctrl-c-follow");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "801");
  expect_sbatch(w.cluster, "802");
  expect_win(w.cluster, "801,802", squeue_row("801", "RUNNING", "a100-1") + squeue_row("802", "PENDING", ""), "801");
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--name=train", "802"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  w.cluster.on([](const auto& a) { return has(a, "tail") && mentions(a, ".out"); }, Cluster::ok("step 1\n"));
  w.cluster.on(
      [](const auto& a) {
        rv::raise_interrupt(2); // Ctrl-C while the job runs
        return has(a, "tail") && mentions(a, ".err");
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "801"); },
               Cluster::ok(squeue_row("801", "RUNNING", "a100-1")));
  auto rc = launch_run(w.env, two_strategies(), {"python train.py"}, "", true);
  rv::clear_interrupt();
  REQUIRE_FALSE(rc);
  CHECK(rc.error().code == ErrorCode::interrupted);
  CHECK(rc.error().message.find("job 801 keeps running") != std::string::npos);
  CHECK(w.output.stdout_text ==
        "request " + w.record()["id"].get<std::string>() +
            " (train): 2 strategies on scripted\n  s1   801        \n  s2   802        \nstep 1\n");
  for (const auto& argv : w.cluster.seen) {
    CHECK_FALSE((has(argv, "scancel") && has(argv, "801"))); // the winner is never cancelled
  }
  auto saved = w.record();
  CHECK(saved["state"] == "won");
  CHECK(saved["jobs"][0]["state"] == "RUNNING");
}

TEST_CASE("lifecycle: a checkpoint segment that resubmitted itself is followed, and the record moves on")
{
  World w("segments");
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "901");
  expect_win(w.cluster, "901", squeue_row("901", "RUNNING", "a100-1"), "901");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "901", "COMPLETED", "0:0", "segment 1\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.901"); }, Cluster::ok("905\n"));
  expect_follow(w.cluster, "905", "COMPLETED", "0:0", "segment 2\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.905"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.output.stdout_text.find("segment 1\nsegment 2\n") != std::string::npos);
  auto saved = w.record();
  CHECK(saved["jobs"][0]["job_id"] == "905");
  CHECK(saved["jobs"][0]["earlier_segments"] == nlohmann::json::array({"901"}));
  CHECK(saved["state"] == "done");
}

TEST_CASE("lifecycle: a GPU fault right after the start is retried as a new request without the node")
{
  World w("hardware-retry");
  // Discovery and probes for the re-plan come from the fallback: two idle a100 nodes.
  w.cluster.fallback = [](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    auto is = [&](std::initializer_list<const char*> words) {
      std::size_t i = 0;
      for (const char* word : words) {
        if (i >= a.size() || a[i] != word) {
          return false;
        }
        ++i;
      }
      return true;
    };
    if (is({"sinfo"})) {
      return Cluster::ok(
          "a100-1|gpu-a100|idle|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|none\n"
          "a100-2|gpu-a100|idle|64|0/64/0/64|512000|0|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)|a100|none\n");
    }
    if (is({"scontrol", "-o", "show", "partition"})) {
      return Cluster::ok("PartitionName=gpu-a100 AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A MaxNodes=2 "
                         "MaxTime=2-00:00:00 Nodes=a100-[1-2] State=UP TRES=cpu=128,gres/gpu=8\n");
    }
    if (is({"scontrol", "-d", "-o", "show", "node"})) {
      return Cluster::ok("NodeName=a100-1 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=0 "
                         "State=IDLE Partitions=gpu-a100\n"
                         "NodeName=a100-2 CPUAlloc=0 CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000 AllocMem=0 "
                         "State=IDLE Partitions=gpu-a100\n");
    }
    if (is({"scontrol", "show", "config"})) {
      return Cluster::ok("ClusterName = rvtest\nSLURM_VERSION = 22.05.8\n");
    }
    if (is({"date"})) {
      return Cluster::ok("+0000 UTC\n");
    }
    if (is({"readlink"})) {
      return Cluster::ok("/usr/share/zoneinfo/UTC\n");
    }
    if (is({"sh", "-s"})) {
      return Cluster::ok(""); // probes: no answers, waits unknown
    }
    return std::nullopt;
  };
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  planned.request.gpus = 1; // the re-plan: one shape (1x1) on the two a100 nodes
  // Try 1: a100-1's GPU falls off the bus 3 s after the start.
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1001");
  expect_win(w.cluster, "1001", squeue_row("1001", "RUNNING", "a100-1"), "1001");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "1001", "FAILED", "1:0", "", "RuntimeError: CUDA error\n");
  w.cluster.on([](const auto& a) { return a.front() == "sh" && has(a, "rv-fault"); },
               Cluster::ok("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"));
  // Try 2, re-planned without a100-1: a new request.
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1002");
  expect_win(w.cluster, "1002", squeue_row("1002", "RUNNING", "a100-2"), "1002");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  expect_follow(w.cluster, "1002", "COMPLETED", "0:0", "trained\n");
  w.cluster.on([](const auto& a) { return a.front() == "cat" && mentions(a, "next.1002"); }, Cluster::reply(1));
  auto rc = launch_run(w.env, planned, {"python train.py"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // The second submission excluded the faulty node.
  std::vector<std::string> scripts;
  for (std::size_t i = 0; i < w.cluster.seen.size(); ++i) {
    if (has(w.cluster.seen[i], "sbatch")) {
      scripts.push_back(w.cluster.stdin_seen[i]);
    }
  }
  REQUIRE(scripts.size() == 2);
  CHECK(scripts[0].find("--exclude") == std::string::npos);
  CHECK(scripts[1].find("#SBATCH --exclude=\"a100-1\"") != std::string::npos);
  auto all = w.requests.list();
  REQUIRE(all);
  CHECK(all->size() == 2); // two requests: the failed try and the retry
}

// #15 defect 6: the secrets file is never written before the record that owns it is on disk.
TEST_CASE("lifecycle: the record (naming the secrets file) is on disk before the secrets reach the cluster")
{
  World w("secrets-order");
  REQUIRE(w.secrets.set({{"WANDB_API_KEY", "s3cr3t"}}));
  bool record_first = false;
  w.cluster.on(
      [&](const auto& a) {
        if (!has(a, "rv-prepare")) {
          return false;
        }
        auto all = w.requests.list();
        record_first = all && all->size() == 1 && (*all)[0]["secrets_file"] == "~/.rv/requests/0badc0de/env";
        return true;
      },
      Cluster::ok("/home/alice/.rv\n/home/alice/.rv/cache\n"));
  expect_sbatch(w.cluster, "1101");
  expect_sbatch(w.cluster, "1102");
  RunExtras extras;
  extras.request_id = "0badc0de";
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run", extras);
  REQUIRE_MESSAGE(launched, launched.error().message);
  CHECK(record_first);
  CHECK(w.cluster.stdin_seen[0].find("s3cr3t") != std::string::npos);
  CHECK(w.record()["secrets_file"] == "/home/alice/.rv/requests/0badc0de/env"); // resolved once known
}

TEST_CASE("lifecycle: a record that cannot be written stops everything before the cluster sees a byte")
{
  World w("unwritable");
  REQUIRE(w.secrets.set({{"TOKEN", "t"}}));
  std::filesystem::create_directories(w.dir);
  std::ofstream(w.dir / "blocker") << "a file where the store's directory should be";
  store::RecordStore blocked(w.dir / "blocker" / "requests");
  Env env{w.cluster, w.local, w.clock, blocked, w.secrets, w.settings, w.output, false, 0, "/home/alice", w.dir};
  auto launched = submit_request(env, two_strategies(), "python train.py", "", "run");
  REQUIRE_FALSE(launched);
  CHECK(w.cluster.seen.empty()); // no secrets written, nothing submitted
}

TEST_CASE("lifecycle: a tie with no claim seen: rv waits for the claim, then the better rank wins")
{
  World w("tie-rank");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1201");
  expect_sbatch(w.cluster, "1202");
  // Both run from the same poll on; the in-job claim never shows (an old guard, a slow file system).
  int polls = 0;
  w.cluster.fallback = [&](const std::vector<std::string>& a) -> std::optional<proc::Outcome> {
    if (has(a, "squeue")) {
      ++polls;
      return Cluster::ok(squeue_row("1201", "RUNNING", "a100-1") + squeue_row("1202", "RUNNING", "v100-1"));
    }
    if (a.front() == "cat" && mentions(a, "/claim/owner")) {
      return Cluster::reply(1, "", "No such file or directory\n");
    }
    return std::nullopt;
  };
  w.cluster.on(
      [](const auto& a) {
        return a == std::vector<std::string>{"scancel", "--name=train", "1202"};
      },
      Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  auto launched = submit_request(w.env, two_strategies(), "python train.py", "", "run");
  REQUIRE(launched);
  auto winner = race_request(w.env, *launched);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(winner->strategy_id == "s1"); // rank 1 beats rank 2 at the same start
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(polls >= 25); // it waited for the claim (~30 s of the fake clock) before deciding
  CHECK(w.clock.slept_ms() >= 29'000);
  auto saved = w.record();
  CHECK(saved["winner"] == "s1");
  CHECK(saved["jobs"][1]["state"] == "CANCELLED");
}

// #15 defect 9: `rv up --run` with secrets fails closed when the secrets file is gone.
TEST_CASE("lifecycle: rv up --run reads the secrets on the node and refuses to run without them")
{
  World w("up-secrets");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1301");
  expect_win(w.cluster, "1301", squeue_row("1301", "RUNNING", "a100-1"), "1301");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  std::vector<std::string> srun;
  w.cluster.on(
      [&](const auto& a) {
        srun = a;
        return a.front() == "srun";
      },
      Cluster::ok("ran\n"));
  w.cluster.on([](const auto& a) { return has(a, "scancel") && has(a, "1301"); }, Cluster::ok());
  w.cluster.on([](const auto& a) { return has(a, "rv-rm"); }, Cluster::ok());
  auto rc = launch_up(w.env, planned, "echo \"token=$HF_TOKEN\"");
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  // The job step: srun ... bash -c SCRIPT SECRETS_FILE COMMAND. Run that program here for real.
  auto bash = std::find(srun.begin(), srun.end(), "bash");
  REQUIRE(bash != srun.end());
  REQUIRE(srun.end() - bash == 5);
  CHECK(
      std::none_of(srun.begin(), srun.end(), [](const std::string& a) { return a.find("hf_x") != std::string::npos; }));
  const auto file = w.dir / "env";
  auto run_step = [&]() {
    proc::LocalRunner local;
    proc::Command c;
    c.argv = {"bash", "-c", bash[2], file.string(), bash[4]};
    auto o = local.run(c);
    REQUIRE(o);
    return *o;
  };
  std::ofstream(file) << "export HF_TOKEN='hf_x'\n";
  auto with = run_step();
  CHECK(with.ok());
  CHECK(with.out == "token=hf_x\n");
  std::filesystem::remove(file);
  auto without = run_step();
  CHECK(without.exit_code == 1);
  CHECK(without.out.empty()); // the command did not run
  CHECK(without.err.find("the secrets file") != std::string::npos);
}

// #15 campaign (sshd_cut during `rv up --run`): the connection dropped, the release's scancel could
// not run, yet the record said `done` with the allocation CANCELLED: nothing ever released it.
TEST_CASE("lifecycle: rv up whose release cannot run keeps the allocation tracked for rv ps and rv stop")
{
  World w("up-release");
  REQUIRE(w.secrets.set({{"HF_TOKEN", "hf_x"}}));
  auto planned = two_strategies();
  planned.plan.strategies.resize(1);
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "1401");
  expect_win(w.cluster, "1401", squeue_row("1401", "RUNNING", "a100-1"), "1401");
  w.cluster.on([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, Cluster::reply(1));
  const Error lost{ErrorCode::unreachable, "connection lost", ""};
  w.cluster.on([](const auto& a) { return a.front() == "srun"; }, lost);
  w.cluster.on([](const auto& a) { return has(a, "scancel"); }, lost);
  auto rc = launch_up(w.env, planned, "true");
  CHECK_FALSE(rc);
  CHECK(w.cluster.unexpected.empty());
  auto saved = w.record();
  CHECK(saved["state"] == "won"); // live: `rv ps` lists it, `rv stop` releases it
  CHECK(saved["jobs"][0]["state"] == "RUNNING");
  CHECK(saved["secrets_file"] != ""); // still needed by the allocation; rv stop deletes it
}

// #13: with a second cluster configured, rv stop sent cluster A's job id to cluster B.
TEST_CASE("lifecycle: rv stop and rv logs act only on the host a request was submitted on")
{
  World w("other-host");
  auto req =
      request_from_json(nlohmann::json{{"id", "a1a1a1a1"},
                                       {"host", "ssh alice@cluster-a:22"},
                                       {"name", "train"},
                                       {"state", "submitted"},
                                       {"created_at", "2026-11-22T05:00:00Z"},
                                       {"jobs", {{{"strategy_id", "s1"}, {"job_id", "971"}, {"state", "PENDING"}}}}});
  REQUIRE(req);
  REQUIRE(w.requests.create(req->id, to_json(*req)));
  std::vector<RequestRecord> targets = {*req};
  auto stopped = stop_requests(w.env, targets);
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().message ==
        "request a1a1a1a1 was submitted on ssh alice@cluster-a:22, but rv is connected to scripted");
  CHECK(stopped.error().hint.find("someone else's job") != std::string::npos);
  auto logs = show_logs(w.env, {"a1a1a1a1", false, false, -1, -1});
  REQUIRE_FALSE(logs);
  CHECK(logs.error().message.find("was submitted on ssh alice@cluster-a:22") != std::string::npos);
  auto listed = list_requests(w.env, true);
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().jobs[0].state == "PENDING"); // shown as last known, not polled here
  CHECK(w.cluster.seen.empty());                     // not one command reached the other cluster
}
