// What the user sees while rv waits, through the lifecycle: the race's own polls (FakeRunner,
// FakeClock) feed the live status; a pending job whose reason changes gives one plain line per
// change without a terminal, a redrawn block on one, JSON events with --json, nothing with
// --quiet; the block is gone before the job's first byte.

#include "app/run/launch/launch.hpp"
#include "app/run/launch/race.hpp"
#include "app/run/show/live_status.hpp"
#include "fakes/argv_match.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/captured_job.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"
#include "unit/templates/cases.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::CaptureOutput;
using rv::test::FakeClock;
using rv::test::FakeRunner;
using rv::test::has;
using rv::test::mentions;

namespace {

struct World {
  std::filesystem::path dir;
  FakeRunner cluster, local;
  FakeClock clock;
  store::RecordStore requests;
  secrets::Store secrets;
  Settings settings;
  CaptureOutput output;
  Env env;

  explicit World(const char* name)
      : dir(std::filesystem::temp_directory_path() / fmt::format("rv-live-{}-{}", name, ::getpid())),
        requests((std::filesystem::remove_all(dir), dir / "requests")), secrets(dir / "secrets.json"),
        env{cluster, local, clock, requests, secrets, settings, output, false, 0, "/home/alice", dir}
  {}
  ~World() { std::filesystem::remove_all(dir); }
};

std::string row(const std::string& state, const std::string& reason, const std::string& start = "N/A",
                const std::string& nodes = "")
{
  return fmt::format("301|{}|{}|gpu-a100|{}|1|{}|N/A|1:00:00|0:00|N/A|rv-3f9c02ab\n", state, reason, nodes, start);
}

// One submitted strategy, job 301, waiting: Priority, then Resources with an estimate (seen
// twice: no news), then running on a100-1, where the claim names it the winner.
Launched one_pending_job(World& w)
{
  RequestRecord rec;
  rec.id = "3f9c02ab";
  rec.name = "rv-3f9c02ab";
  rec.remote_root = "/home/alice/.rv";
  rec.log_dir = "/home/alice/.rv/logs";
  auto& j = rec.jobs.emplace_back();
  j.strategy_id = "s1";
  j.label = "1x a100 on gpu-a100";
  j.partition = "gpu-a100";
  j.gpu_type = "a100";
  j.job_id = "301";
  j.state = slurm::JobState::pending;
  REQUIRE(w.requests.create(rec.id, to_json(rec)));
  rec.base = to_json(rec);
  RemotePaths paths;
  paths.requests = "/home/alice/.rv/requests";
  Launched l(OwnedRequest(w.cluster, w.requests, std::move(rec)), std::move(paths));
  auto squeue = [](const auto& a) { return has(a, "squeue"); };
  w.cluster.expect(squeue, FakeRunner::reply(0, row("PENDING", "Priority")));
  // The first poll reads the claim with squeue (a job may start before it): none yet.
  w.cluster.expect([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); },
                   FakeRunner::reply(1, "", "No such file or directory"));
  w.cluster.expect(squeue, FakeRunner::reply(0, row("PENDING", "Resources", "2026-11-22T14:05:00")));
  w.cluster.expect(squeue, FakeRunner::reply(0, row("PENDING", "Resources", "2026-11-22T14:05:00")));
  w.cluster.expect(squeue, FakeRunner::reply(0, row("RUNNING", "None", "2026-11-22T14:05:00", "a100-1")));
  w.cluster.expect([](const auto& a) { return a.front() == "cat" && mentions(a, "/claim/owner"); },
                   FakeRunner::reply(0, "301\n"));
  w.cluster.expect([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, FakeRunner::reply(1));
  return l;
}

// Races the one pending job, shown by `live`; every scripted command must have been asked.
void race(World& w, Launched& l, LiveStatus& live)
{
  auto winner = race_request(w.env, l, live);
  REQUIRE_MESSAGE(winner, winner.error().message);
  CHECK(w.cluster.all_consumed());
}

std::vector<nlohmann::json> events(const std::string& text)
{
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line)); // throws (fails the test) on a line that is not JSON
  }
  return out;
}

} // namespace

TEST_CASE("live status: without a terminal and with -v, one plain line per change of the pending job")
{
  World w("plain");
  w.env.verbosity = 1;
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  race(w, l, live);
  CHECK(w.output.stderr_text ==
        "rv: request 3f9c02ab: waiting for its job to start\n"
        "rv: s1 (job 301): PENDING: other jobs are ahead in the queue (Priority) [0:00]\n"
        "rv: s1 (job 301): PENDING: waiting for free GPUs (Resources), est. start 2026-11-22T14:05:00 [0:01]\n"
        "rv: s1 (job 301): RUNNING on a100-1 [0:03]\n");
  CHECK(w.output.stderr_text.find('\x1b') == std::string::npos); // no control sequences
  CHECK(w.output.frames.empty());
  CHECK(w.output.stdout_text.empty());
}

// #24 item 9: ~22 rv lines around 4 of the program's; the wait is one line by default.
TEST_CASE("live status: without a terminal, the wait is one line, the job script's chatter is held back")
{
  World w("plain-default");
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  race(w, l, live);
  CHECK(w.output.stderr_text == "rv: request 3f9c02ab: waiting for its job to start\n");
  JobOutput job(w.env, live, l.rec.id, "301", "a100-1");
  job.err("rv: job 301 won request 3f9c02ab\nrv: cancelling sib");
  job.err("ling job 302 of request 3f9c02ab\nrv preflight: ok node=a100-1 gpus=1/1\n");
  job.out("epoch 1\n");
  job.err("Traceback (most recent call last):\nrv is fine\nr");
  job.err("untime: 3 s\nrv: command exited with status 0\n");
  job.err("rv: preflight warning: node0 does not resolve on a100-1; rendezvous port not checked\n");
  job.err("rv: command exited with status 1\npartial");
  job.flush();
  CHECK(w.output.stderr_text == "rv: request 3f9c02ab: waiting for its job to start\n"
                                "Traceback (most recent call last):\nrv is fine\nruntime: 3 s\n"
                                "rv: preflight warning: node0 does not resolve on a100-1; rendezvous port not checked\n"
                                "rv: command exited with status 1\npartial");
  CHECK(w.output.stdout_text == "epoch 1\n");
}

TEST_CASE("live status: -v shows the job script's own lines as they come")
{
  World w("verbose-job");
  w.env.verbosity = 1;
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  JobOutput job(w.env, live, l.rec.id, "301", "a100-1");
  job.err("rv: job 301 won request 3f9c02ab\n");
  CHECK(w.output.stderr_text.ends_with("rv: job 301 won request 3f9c02ab\n"));
  CHECK(is_job_side_line("rv preflight: ok node=x"));
  CHECK_FALSE(is_job_side_line("rvx: no"));
  CHECK(job_side_line_matters("rv preflight: FAIL node=x reason=y"));
  CHECK(job_side_line_matters("rv: command exited with status 10"));
  CHECK_FALSE(job_side_line_matters("rv: command exited with status 0\n"));
  CHECK_FALSE(job_side_line_matters("rv: job 301 on a100-1: running the command"));
}

TEST_CASE("live status: on a terminal, the block is redrawn each poll and removed before the output")
{
  World w("tty");
  w.output.term = Terminal{true, false, 0};
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  race(w, l, live);
  // Drawn when the wait began, then once per poll (4), then removed as the race ended.
  REQUIRE(w.output.frames.size() == 6);
  CHECK(w.output.frames[0][0] == "rv: request 3f9c02ab: waiting for its job to start 0:00");
  CHECK(w.output.frames[1][1].find("PENDING: other jobs are ahead in the queue (Priority)") != std::string::npos);
  CHECK(w.output.frames[2][0].ends_with(" 0:01")); // the elapsed time is the FakeClock's
  CHECK(w.output.frames[2][1].find("waiting for free GPUs (Resources), est. start 2026-11-22T14:05:00") !=
        std::string::npos);
  CHECK(w.output.frames[5].empty());
  CHECK(w.output.stderr_text.empty()); // a terminal gets no plain lines
  // The job's output begins: the status never comes back, whatever the loops still report.
  JobOutput job(w.env, live, l.rec.id, "301", "a100-1");
  job.out("epoch 1\n");
  live.jobs(l.rec);
  live.phase("anything");
  CHECK(w.output.frames.size() == 6);
  CHECK(w.output.stdout_text == "epoch 1\n");
}

TEST_CASE("live status: --json gives a state event per change, the winner, then the output as events")
{
  World w("json");
  w.env.json = true;
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  race(w, l, live);
  {
    JobOutput job(w.env, live, l.rec.id, "301", "a100-1");
    job.out("epoch 1\npart");
    job.err("warn\n");
  } // the unfinished line is sent when the output ends
  auto ev = events(w.output.stdout_text);
  REQUIRE(ev.size() == 8);
  CHECK(ev[0]["event"] == "state");
  CHECK(ev[0]["reason"] == "Priority");
  CHECK(ev[1]["reason"] == "Resources");
  CHECK(ev[1]["reason_text"] == "waiting for free GPUs");
  CHECK(ev[1]["start_estimate"] == "2026-11-22T14:05:00");
  CHECK(ev[2]["state"] == "RUNNING");
  CHECK(ev[2]["nodes"] == "a100-1");
  CHECK(ev[3]["event"] == "winner");
  CHECK(ev[3]["job_id"] == "301");
  CHECK(ev[4]["event"] == "output_started");
  CHECK(ev[5] == nlohmann::json({{"event", "output"},
                                 {"request", "3f9c02ab"},
                                 {"job_id", "301"},
                                 {"node", "a100-1"},
                                 {"stream", "stdout"},
                                 {"text", "epoch 1\n"},
                                 {"time", ev[5]["time"]}}));
  CHECK(ev[6]["stream"] == "stderr");
  CHECK(ev[7]["text"] == "part");
  for (const auto& e : ev) {
    CHECK(e["time"].is_number());
  }
  CHECK(w.output.stderr_text.empty());
  CHECK(w.output.frames.empty());
}

TEST_CASE("live status: --quiet shows nothing while waiting, the job's bytes still arrive as they are")
{
  World w("quiet");
  w.env.quiet = true;
  w.output.term = Terminal{true, true, 80};
  auto l = one_pending_job(w);
  LiveStatus live(w.env, true);
  race(w, l, live);
  JobOutput job(w.env, live, l.rec.id, "301", "a100-1");
  job.out("x\n");
  CHECK(w.output.frames.empty());
  CHECK(w.output.stderr_text.empty());
  CHECK(w.output.stdout_text == "x\n");
}

TEST_CASE("live status: rv run -f --json: submitted, states, winner, output and ended, all parseable")
{
  World w("run-json");
  w.env.json = true;
  PlanRun p;
  p.request = templates::testing::base_request();
  p.plan.strategies = {templates::testing::base_strategy()};
  w.cluster.expect([](const auto& a) { return has(a, "rv-prepare"); },
                   FakeRunner::reply(0, "/home/alice/.rv\n/home/alice/.rv/cache\n"));
  w.cluster.expect([](const auto& a) { return has(a, "sbatch"); }, FakeRunner::reply(0, "301\n"));
  auto squeue = [](const auto& a) { return has(a, "squeue"); };
  const std::string name = p.request.job_name;
  auto row_of = [&](const std::string& state, const std::string& reason, const std::string& nodes) {
    return fmt::format("301|{}|{}|gpu-a100|{}|1|N/A|N/A|1:00:00|0:00|N/A|{}\n", state, reason, nodes, name);
  };
  w.cluster.expect(squeue, FakeRunner::reply(0, row_of("PENDING", "Resources", "")));
  w.cluster.expect([](const auto& a) { return a.front() == "cat"; }, FakeRunner::reply(1)); // with the first poll
  w.cluster.expect([](const auto& a) { return has(a, "rv-wait"); }, FakeRunner::reply(0));  // for the claim
  w.cluster.expect(squeue, FakeRunner::reply(0, row_of("RUNNING", "None", "a100-1")));
  w.cluster.expect([](const auto& a) { return a.front() == "cat"; }, FakeRunner::reply(0, "301\n"));
  // The follow's first round trip: the node read, the wait for the first output (0.1 s), both logs.
  auto wait_taking = [&w](long long ms) {
    return [&w, ms](const std::vector<std::string>& a) {
      if (!has(a, "rv-wait")) {
        return false;
      }
      w.clock.advance(std::chrono::milliseconds(ms));
      return true;
    };
  };
  w.cluster.expect([](const auto& a) { return has(a, "scontrol") && has(a, "node"); }, FakeRunner::reply(1));
  w.cluster.expect(wait_taking(100), FakeRunner::reply(0));
  w.cluster.expect([](const auto& a) { return has(a, "tail") && mentions(a, ".out"); }, FakeRunner::reply(0, "hi\n"));
  w.cluster.expect([](const auto& a) { return has(a, "tail") && mentions(a, ".err"); }, FakeRunner::reply(0));
  w.cluster.expect(wait_taking(650), FakeRunner::reply(0)); // 0.35 s to the first poll at 1 s
  w.cluster.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  w.cluster.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  w.cluster.expect(squeue, FakeRunner::reply(0, row_of("COMPLETED", "None", "a100-1")));
  w.cluster.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  w.cluster.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  w.cluster.expect([](const auto& a) { return has(a, "scontrol") && has(a, "301"); },
                   FakeRunner::reply(0, rv::test::scontrol_job("301", "COMPLETED", "0:0")));
  w.cluster.expect([](const auto& a) { return has(a, "sacct"); }, FakeRunner::reply(0));
  w.cluster.expect([](const auto& a) { return a.front() == "cat" && mentions(a, "next.301"); }, FakeRunner::reply(1));
  auto rc = launch_run(w.env, p, {"echo hi"}, "", true);
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(*rc == 0);
  CHECK(w.cluster.unexpected().empty());
  std::vector<std::string> kinds;
  for (const auto& e : events(w.output.stdout_text)) {
    kinds.push_back(e["event"]);
    if (e["event"] == "ended") {
      CHECK(e["exit_code"] == 0);
      CHECK(e["state"] == "COMPLETED");
    }
    if (e["event"] == "output") {
      CHECK(e["text"] == "hi\n");
    }
  }
  CHECK(kinds ==
        std::vector<std::string>{"submitted", "state", "state", "winner", "output_started", "output", "ended"});
}
