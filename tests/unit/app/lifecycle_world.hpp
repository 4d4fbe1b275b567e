#pragma once
// The scripted world of the lifecycle tests (test_lifecycle*.cpp, test_up.cpp): a cluster answering
// step by step, an Env built from fakes with temp stores, a two-strategy plan, and the usual steps.

#include "app/env.hpp"
#include "app/run/plan/planning.hpp"
#include "app/settings.hpp"
#include "core/process/runner.hpp"
#include "core/secrets.hpp"
#include "core/store/record_store.hpp"
#include "fakes/argv_match.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/captured_job.hpp"
#include "fakes/fake_clock.hpp"
#include "unit/templates/cases.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace rv::test::lifecycle {

using namespace rv::app;
using rv::test::CaptureOutput;
using rv::test::FakeClock;
using rv::test::has;
using rv::test::mentions;
using rv::test::scontrol_job;

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
    const bool scripted = !m_steps.empty() && m_steps.front().match(cmd.argv);
    if (auto wait = std::find(cmd.argv.begin(), cmd.argv.end(), "rv-wait"); !scripted && wait != cmd.argv.end()) {
      // A wait on the login node (remote::wait_for_growth_command) that nothing ends early: it
      // takes its looks of 0.2 s on the test's clock.
      const auto looks = wait + 1 == cmd.argv.end() ? 0 : std::stoll(*(wait + 1));
      waited_ms += looks * 200;
      if (clock) {
        clock->advance(std::chrono::milliseconds(looks * 200));
      }
      return ok();
    }
    if (!scripted && fallback) {
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
  // Each batch's size (the round trips of a real runner), then its commands one by one; with
  // `lose_next_batch_answer`, the next batch runs and its answer is that error (a connection that
  // ended after the batch was sent).
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    batch_sizes.push_back(cmds.size());
    auto outcomes = Runner::run_batch(cmds);
    if (lose_next_batch_answer) {
      auto lost = std::move(*lose_next_batch_answer);
      lose_next_batch_answer.reset();
      return std::unexpected(std::move(lost));
    }
    return outcomes;
  }
  std::optional<Error> lose_next_batch_answer;
  // rv up's shell on a PTY: answered as a scripted command is (its status).
  Result<int> run_interactive(const std::vector<std::string>& argv) override
  {
    proc::Command c;
    c.argv = argv;
    RV_TRY(o, run(c));
    return o.status();
  }
  std::string where() const override { return "scripted"; }
  std::string user() override { return user_name; }
  std::string user_name; // "" = unknown (no sacctmgr in discovery)
  bool done() const { return m_steps.empty(); }
  std::vector<std::size_t> batch_sizes;
  FakeClock* clock = nullptr; // advanced by the waits on the login node
  long long waited_ms = 0;    // their time

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
  {
    env.workspace_key_file = dir / "workspace.key";
    cluster.clock = &clock;
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
inline PlanRun two_strategies()
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
inline void expect_prepare(Cluster& c, const std::string& root = "/home/alice/.rv")
{
  c.on([](const auto& a) { return has(a, "rv-prepare"); }, Cluster::ok(root + "\n" + root + "/cache\n"));
}

// sbatch --parsable for one strategy: a job id, or Slurm's refusal.
inline void expect_sbatch(Cluster& c, const std::string& job_id, const std::string& refusal = {})
{
  c.on([](const auto& a) { return has(a, "sbatch"); },
       refusal.empty() ? Cluster::ok(job_id + "\n")
                       : Cluster::reply(1, "", "sbatch: error: Batch job submission failed: " + refusal + "\n"));
}

// One squeue row; `elapsed` is the run time (0:00 = never started).
inline std::string squeue_row(const std::string& id, const std::string& state, const std::string& nodes,
                              const std::string& elapsed = "0:05")
{
  return fmt::format("{}|{}|None|p|{}|1|N/A|N/A|2:00:00|{}|N/A|train\n", id, state, nodes, elapsed);
}

// The steps of following job `id` to its end in state `state` (exit code `code`), printing `out`.
inline void expect_follow(Cluster& c, const std::string& id, const std::string& state, const std::string& code,
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
inline void expect_win(Cluster& c, const std::string& ids, const std::string& squeue, const std::string& winner)
{
  c.on([ids](const auto& a) { return has(a, "squeue") && has(a, ids); }, Cluster::ok(squeue));
  c.on([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); }, Cluster::ok(winner + "\n"));
}

} // namespace rv::test::lifecycle
