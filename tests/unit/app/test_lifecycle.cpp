// The request lifecycle end to end against a scripted cluster: submit (with refusals), the race,
// following the winner, and what the record and the secrets file look like on each exit path.
// Every effect comes through an app::Env built from fakes: no cluster, no clock, no terminal.

#include "app/launch.hpp"
#include "app/submit.hpp"
#include "core/interrupt.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/fake_clock.hpp"
#include "unit/templates/cases.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <deque>
#include <fstream>
#include <functional>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::CaptureOutput;
using rv::test::FakeClock;

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

  Result<proc::Outcome> run(const proc::Command& cmd) override
  {
    ++m_round_trips;
    seen.push_back(cmd.argv);
    stdin_seen.push_back(cmd.stdin_data.value_or(""));
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
  Config config;
  CaptureOutput output;
  Env env;

  explicit World(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-lifecycle-{}-{}", name, ::getpid())),
        requests((std::filesystem::remove_all(dir), dir / "requests")), secrets(dir / "secrets.json"),
        env{cluster, local, clock, requests, secrets, config, output, false, 0, "/home/alice", dir}
  {
  }
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

std::string squeue_row(const std::string& id, const std::string& state, const std::string& nodes)
{
  return fmt::format("{}|{}|None|p|{}|1|N/A|N/A|2:00:00|0:05|N/A|train\n", id, state, nodes);
}

// Captured on the testbed (COMPLETED, ExitCode=0:0), renumbered and with another state and code.
std::string scontrol_job(const std::string& id, const std::string& state, const std::string& exit_code)
{
  std::ifstream in(std::filesystem::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "scontrol_show_job.completed.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto swap = [&](const std::string& from, const std::string& to) {
    auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
  };
  swap("JobId=2 ", "JobId=" + id + " ");
  swap("JobState=COMPLETED", "JobState=" + state);
  swap("ExitCode=0:0", "ExitCode=" + exit_code);
  return text;
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
  w.cluster.on([](const auto& a) { return a.front() == "rm" && mentions(a, "/requests/"); }, Cluster::ok());
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
  w.cluster.on([](const auto& a) { return has(a, "sbatch"); }, Error{ErrorCode::interrupted, "interrupted by signal 2", ""});
  w.cluster.on([](const auto& a) { return has(a, "squeue") && has(a, "--me") && has(a, "train"); },
               Cluster::ok("201|PENDING|rv:c0ffee01|train\n777|RUNNING|(null)|train\n"));
  w.cluster.on([](const auto& a) { return a == std::vector<std::string>{"scancel", "--name=train", "201"}; }, Cluster::ok());
  w.cluster.on([](const auto& a) { return a.front() == "rm" && mentions(a, "/requests/c0ffee01/env"); }, Cluster::ok());
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
  w.cluster.on([](const auto& a) { return a == std::vector<std::string>{"scancel", "--name=train", "301"}; }, Cluster::ok());
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
  w.cluster.on([](const auto& a) { return has(a, "scancel") && has(a, "--name=train") && has(a, "401") && has(a, "402"); },
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
