#include "app/run/show/follow.hpp"
#include "fakes/argv_match.hpp"
#include "fakes/capture_output.hpp"
#include "fakes/captured_job.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace rv;
using namespace rv::app;
using rv::test::CaptureOutput;
using rv::test::FakeClock;
using rv::test::FakeRunner;
using rv::test::has;
using rv::test::scontrol_job;

namespace {
// One segment's worth of commands: logs, squeue says ended, logs, final state.
void expect_segment(FakeRunner& r, const std::string& id, const std::string& state, const std::string& exit_code)
{
  const std::string log = "/rv/logs/rv-req-" + id;
  r.expect([log](const auto& a) { return has(a, "tail") && has(a, log + ".out"); },
           FakeRunner::reply(0, "out of " + id + "\n"));
  r.expect([log](const auto& a) { return has(a, "tail") && has(a, log + ".err"); }, FakeRunner::reply(0));
  r.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, fmt::format("{}|{}|None|p|n1|1|N/A|N/A|1:00:00|0:05|N/A|rv-req\n", id, state)));
  r.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  r.expect([](const auto& a) { return has(a, "tail"); }, FakeRunner::reply(0));
  r.expect_prefix({"scontrol", "show", "job", id}, FakeRunner::reply(0, scontrol_job(id, state, exit_code)));
  r.expect([](const auto& a) { return has(a, "sacct"); }, FakeRunner::reply(0));
}

RequestRecord request()
{
  RequestRecord r;
  r.id = "req";
  r.name = "rv-req";
  r.remote_root = "/rv";
  r.log_dir = "/rv/logs";
  auto& j = r.jobs.emplace_back();
  j.strategy_id = "s1";
  j.partition = "p";
  j.gpu_type = "a100";
  j.job_id = "21";
  j.state = slurm::JobState::running;
  j.node_list = "n1";
  r.winner = "s1";
  return r;
}
} // namespace

TEST_CASE("follow: a checkpoint segment that resubmitted itself is followed into the next job")
{
  FakeRunner r;
  FakeClock clock;
  CaptureOutput out;
  expect_segment(r, "21", "COMPLETED", "0:0");
  r.expect_prefix({"cat", "--", "/rv/requests/req/next.21"}, FakeRunner::reply(0, "22\n"));
  expect_segment(r, "22", "COMPLETED", "0:0");
  r.expect_prefix({"cat", "--", "/rv/requests/req/next.22"}, FakeRunner::reply(1, "", "No such file or directory"));
  auto rec = request();
  std::vector<std::pair<std::string, std::string>> hops;
  auto status = follow_job(r, clock, out, rec, rec.jobs[0], 0, 0,
                           [&](const std::string& prev, const std::string& next) { hops.emplace_back(prev, next); });
  REQUIRE(status);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK(status->job_id == "22");
  CHECK(status->state == slurm::JobState::completed);
  REQUIRE(hops.size() == 1);
  CHECK(hops[0] == std::pair<std::string, std::string>{"21", "22"});
  CHECK(out.stdout_text == "out of 21\nout of 22\n"); // both segments' output, each once
}

TEST_CASE("follow: a failed job is final, whatever next file exists")
{
  FakeRunner r;
  FakeClock clock;
  CaptureOutput out;
  expect_segment(r, "21", "FAILED", "3:0");
  auto rec = request();
  auto status = follow_job(r, clock, out, rec, rec.jobs[0]);
  REQUIRE(status);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK(status->job_id == "21");
  CHECK(status->exit_status == 3);
  CHECK(exit_code_of(*status, status->job_id) == 3);
}

TEST_CASE("follow: the record moves on to the next segment and keeps the earlier one")
{
  auto dir = std::filesystem::temp_directory_path() / fmt::format("rv-follow-{}", ::getpid());
  std::filesystem::remove_all(dir);
  store::RecordStore store(dir);
  auto rec = request();
  REQUIRE(store.create(rec.id, to_json(rec)));
  record_next_segment(store, rec, "21", "22");
  CHECK(rec.jobs[0].job_id == "22");
  CHECK(rec.jobs[0].earlier_segments == std::vector<std::string>{"21"});
  auto saved = store.read(rec.id);
  REQUIRE(saved);
  auto back = request_from_json(*saved);
  REQUIRE(back);
  CHECK(back->jobs[0].job_id == "22");
  CHECK(back->jobs[0].earlier_segments == std::vector<std::string>{"21"});
  CHECK(back->winner_job()->job_id == "22");
  std::filesystem::remove_all(dir);
}

TEST_CASE("follow: between squeue polls rv waits on the login node for the logs to grow")
{
  FakeRunner r;
  FakeClock clock;
  CaptureOutput out;
  const std::string log = "/rv/logs/rv-req-21";
  auto is_tail = [](const auto& a) { return has(a, "tail"); };
  // The watched logs and the looks of each wait, as rv asked for them; each wait takes `ms` of the
  // test's clock on the login node (ended early by output, or all of its looks).
  std::vector<std::vector<std::string>> waits;
  auto wait_taking = [&](long long ms) {
    return [&, ms](const std::vector<std::string>& a) {
      if (!has(a, "rv-wait")) {
        return false;
      }
      waits.emplace_back(std::find(a.begin(), a.end(), "rv-wait") + 1, a.end());
      clock.advance(std::chrono::milliseconds(ms));
      return true;
    };
  };
  auto squeue = [](const char* state) {
    return FakeRunner::reply(0, fmt::format("21|{}|None|p|n1|1|N/A|N/A|1:00:00|0:05|N/A|rv-req\n", state));
  };
  // t=0: nothing printed yet; squeue says running (next poll at 1 s). rv waits on the login node at
  // once (the last read got nothing); the job prints at 0.3 s and the wait ends.
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect([](const auto& a) { return has(a, "squeue"); }, squeue("RUNNING"));
  r.expect(wait_taking(300), FakeRunner::reply(0));
  // t=0.3 s: the output, read without a squeue. The next wait begins a quarter second later
  // (0.55 s) and runs to the poll, from the new offset.
  r.expect(is_tail, FakeRunner::reply(0, "hi\n"));
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect(wait_taking(450), FakeRunner::reply(0));
  // t=1 s: the next squeue says it ended; the last read, the final state.
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect([](const auto& a) { return has(a, "squeue"); }, squeue("COMPLETED"));
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect(is_tail, FakeRunner::reply(0));
  r.expect_prefix({"scontrol", "show", "job", "21"},
                  FakeRunner::reply(0, rv::test::scontrol_job("21", "COMPLETED", "0:0")));
  r.expect([](const auto& a) { return has(a, "sacct"); }, FakeRunner::reply(0));
  r.expect_prefix({"cat", "--", "/rv/requests/req/next.21"}, FakeRunner::reply(1));
  auto rec = request();
  auto status = follow_job(r, clock, out, rec, rec.jobs[0]);
  CAPTURE(r.unexpected().empty() ? std::string() : r.unexpected().front().back());
  REQUIRE(status);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK(out.stdout_text == "hi\n");
  using V = std::vector<std::string>;
  REQUIRE(waits.size() == 2);
  // Looks of 0.2 s until the next poll (1 s, then 0.45 s left), each log from its offset.
  CHECK(waits[0] == V{"5", log + ".out", "0", log + ".err", "0"});
  CHECK(waits[1] == V{"2", log + ".out", "3", log + ".err", "0"});
  CHECK(clock.slept_ms() == 250); // only the quarter second after the read that got output
}

namespace {
// The poll that finds job 21 ended, the last reads, its final state, no next segment.
void expect_end(FakeRunner& f)
{
  auto is_tail = [](const auto& a) { return has(a, "tail"); };
  f.expect([](const auto& a) { return has(a, "squeue"); },
           FakeRunner::reply(0, "21|COMPLETED|None|p|n1|1|N/A|N/A|1:00:00|0:05|N/A|rv-req\n"));
  f.expect(is_tail, FakeRunner::reply(0));
  f.expect(is_tail, FakeRunner::reply(0));
  f.expect_prefix({"scontrol", "show", "job", "21"}, FakeRunner::reply(0, scontrol_job("21", "COMPLETED", "0:0")));
  f.expect([](const auto& a) { return has(a, "sacct"); }, FakeRunner::reply(0));
  f.expect_prefix({"cat", "--", "/rv/requests/req/next.21"}, FakeRunner::reply(1));
}

// Records each round trip's commands by name (a batch is one), answering each from `inner`.
class Trips final : public proc::Runner {
public:
  explicit Trips(FakeRunner& inner) : m_inner(inner) {}
  Result<proc::Outcome> run(const proc::Command& c) override
  {
    trips.push_back({name(c.argv)});
    return m_inner.run(c);
  }
  Result<std::vector<proc::Outcome>> run_batch(const std::vector<proc::Command>& cmds) override
  {
    std::vector<std::string> names;
    for (const auto& c : cmds) {
      names.push_back(name(c.argv));
    }
    trips.push_back(names);
    std::vector<proc::Outcome> outs;
    for (const auto& c : cmds) {
      RV_TRY(o, m_inner.run(c));
      outs.push_back(std::move(o));
    }
    return outs;
  }
  std::string where() const override { return "trips"; }
  std::vector<std::vector<std::string>> trips;

private:
  static std::string name(const std::vector<std::string>& a)
  {
    for (const char* n : {"rv-wait", "tail", "squeue", "sacct"}) {
      if (has(a, n)) {
        return n;
      }
    }
    return a.size() > 2 ? a[0] + " " + a[1] + " " + a[2] : a.front();
  }
  FakeRunner& m_inner;
};
} // namespace

// Issue #38 item 7: rv run -f right after the race: no squeue of its own first (the race's counts),
// the first round trip waits for the first output, reads both logs and carries the winner's node
// read; each later read after a pause is its wait and the reads in one round trip.
TEST_CASE("follow: just started, the wait and the reads are one round trip, the node read rides in the first")
{
  FakeRunner f;
  FakeClock clock;
  CaptureOutput out;
  auto wait_taking = [&](long long ms) {
    return [&, ms](const std::vector<std::string>& a) {
      if (!has(a, "rv-wait")) {
        return false;
      }
      clock.advance(std::chrono::milliseconds(ms));
      return true;
    };
  };
  auto is_tail = [](const auto& a) { return has(a, "tail"); };
  f.expect_prefix({"scontrol", "show", "node"}, FakeRunner::reply(0, "NodeName=n1 Gres=gpu:a100:4\n"));
  f.expect(wait_taking(300), FakeRunner::reply(0)); // the job prints at 0.3 s
  f.expect(is_tail, FakeRunner::reply(0, "hello\n"));
  f.expect(is_tail, FakeRunner::reply(0));
  f.expect(wait_taking(450), FakeRunner::reply(0)); // from 0.55 s to the first poll at 1 s
  f.expect(is_tail, FakeRunner::reply(0, "bye\n"));
  f.expect(is_tail, FakeRunner::reply(0));
  expect_end(f);
  Trips r(f);
  auto rec = request();
  std::string node_seen;
  FollowStart start;
  start.just_started = true;
  proc::Command node;
  node.argv = {"scontrol", "show", "node", "n1"};
  start.along = AlongRead{node, [&](const proc::Outcome& o) { node_seen = o.out; }};
  auto status = follow_job(r, clock, out, rec, rec.jobs[0], 0, 0, {}, std::move(start));
  CAPTURE(f.unexpected().empty() ? std::string() : f.unexpected().front().back());
  REQUIRE(status);
  CHECK(f.unexpected().empty());
  CHECK(f.all_consumed());
  CHECK(out.stdout_text == "hello\nbye\n");
  CHECK(node_seen == "NodeName=n1 Gres=gpu:a100:4\n");
  using V = std::vector<std::string>;
  REQUIRE(r.trips.size() >= 3);
  CHECK(r.trips[0] == V{"scontrol show node", "rv-wait", "tail", "tail"}); // no squeue before it
  CHECK(r.trips[1] == V{"rv-wait", "tail", "tail"});
  CHECK(r.trips[2] == V{"squeue"});
  CHECK(clock.slept_ms() == 250); // the quarter second after the read that got output, nothing else
}

TEST_CASE("follow: a wait that cannot run in the reads' batch sleeps the rest of the pause here")
{
  FakeRunner f;
  FakeClock clock;
  CaptureOutput out;
  auto is_tail = [](const auto& a) { return has(a, "tail"); };
  // The first batch's wait fails (exit 127: no sh): the reads still count, the rest of the pause
  // (1 s) is slept here, then the poll.
  f.expect([](const auto& a) { return has(a, "rv-wait"); }, FakeRunner::reply(127));
  f.expect(is_tail, FakeRunner::reply(0));
  f.expect(is_tail, FakeRunner::reply(0));
  expect_end(f);
  Trips r(f);
  auto rec = request();
  FollowStart start;
  start.just_started = true;
  auto status = follow_job(r, clock, out, rec, rec.jobs[0], 0, 0, {}, std::move(start));
  REQUIRE(status);
  CHECK(f.all_consumed());
  CHECK(clock.slept_ms() == 1000);
}
