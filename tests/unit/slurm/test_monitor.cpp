#include "core/interrupt.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_runner.hpp"
#include "fakes/recording_runner.hpp"
#include "slurm/monitor.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace rv;
using namespace rv::slurm;
using rv::test::FakeClock;
using rv::test::FakeRunner;

namespace {
Race race_of(std::initializer_list<const char*> ids)
{
  std::vector<RaceEntry> entries;
  int n = 1;
  for (const char* id : ids) {
    entries.push_back(RaceEntry{"s" + std::to_string(n++), id, {}, false, {}});
  }
  return Race(std::move(entries));
}

bool is_squeue(const std::vector<std::string>& argv)
{
  return std::find(argv.begin(), argv.end(), "squeue") != argv.end();
}

bool is_sacct(const std::vector<std::string>& argv)
{
  return std::find(argv.begin(), argv.end(), "sacct") != argv.end();
}

// rv's squeue format: %i|%T|%r|%P|%N|%D|%S|%e|%l|%M|%b|%j
std::string row(const char* id, const char* state, const char* reason = "None", const char* elapsed = "0:00")
{
  return fmt::format("{}|{}|{}|gpu-a100|{}|1|N/A|N/A|1:00:00|{}|gres:gpu:a100:1|rv-x\n", id, state, reason,
                     std::string(state) == "RUNNING" ? "a100-1" : "", elapsed);
}
// A stand-in for the login node's wait: its argv names the pause rv handed over.
proc::Command wait_for_claim(std::chrono::milliseconds d)
{
  proc::Command c;
  c.argv = {"wait-for-claim", std::to_string(d.count())};
  return c;
}
} // namespace

TEST_CASE("monitor: the winner's siblings are cancelled in one scancel, with backoff between polls")
{
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("11", "PENDING", "Resources") + row("12", "PENDING", "Priority")));
  r.expect(is_squeue, FakeRunner::reply(0, row("11", "PENDING", "Resources") + row("12", "RUNNING", "None", "0:03")));
  r.expect_prefix({"scancel", "--me", "11"}, FakeRunner::reply(0));
  auto race = race_of({"11", "12"});
  std::vector<std::string> recorded;
  MonitorOptions opts;
  opts.on_cancel = [&](const std::vector<std::string>& ids) { recorded = ids; };
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK(*race.winner() == 1);
  CHECK(stats->cancelled == std::vector<std::string>{"11"});
  CHECK(recorded == std::vector<std::string>{"11"});
  CHECK(stats->polls == 2);
  CHECK(clock.slept_ms() == 1000);
}

TEST_CASE("monitor: with the siblings' job name, every scancel names it, so a reused job id is left alone")
{
  // Slurm 22.05 (the testbed): `scancel --name=beta 87` leaves job 87 named alpha pending; the
  // name filter intersects with the ids, so Slurm itself refuses to cancel a reused id.
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("11", "PENDING", "Resources") + row("12", "RUNNING", "None", "0:03")));
  r.expect_prefix({"scancel", "--me", "--name=rv-x", "11"}, FakeRunner::reply(0));
  auto race = race_of({"11", "12"});
  MonitorOptions opts;
  opts.job_name = "rv-x";
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(stats->cancelled == std::vector<std::string>{"11"});
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  FakeRunner direct;
  direct.expect_prefix({"scancel", "--me", "--name=train", "7", "8"}, FakeRunner::reply(0));
  CHECK(cancel_jobs(direct, {"7", "8"}, "train"));
  CHECK(direct.unexpected().empty());
  CHECK(direct.all_consumed());
}

TEST_CASE("monitor: a job gone from squeue is looked up with scontrol, then sacct, no record is not failure")
{
  FakeRunner r;
  FakeClock clock;
  // Poll 1: 21 pending, 22 vanished; scontrol and sacct know nothing yet (lag).
  r.expect(is_squeue, FakeRunner::reply(0, row("21", "PENDING", "Resources")));
  r.expect_prefix({"scontrol", "show", "job", "22"},
                  FakeRunner::reply(1, "", "slurm_load_jobs error: Invalid job id specified"));
  r.expect(is_sacct, FakeRunner::reply(0, ""));
  // Poll 2: sacct now has it: it completed between polls, so it won.
  r.expect(is_squeue, FakeRunner::reply(0, row("21", "PENDING", "Resources")));
  r.expect_prefix({"scontrol", "show", "job", "22"}, FakeRunner::reply(1, "", "Invalid job id"));
  r.expect(
      is_sacct,
      FakeRunner::reply(
          0, "22|COMPLETED|0:0|00:00:02|2026-11-22T04:00:00|2026-11-22T04:00:02|a100-2|billing=1|gpu-a100|rv-x\n"));
  r.expect_prefix({"scancel", "--me", "21"}, FakeRunner::reply(0));
  auto race = race_of({"21", "22"});
  auto stats = run_race(r, clock, race, {});
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(*race.winner() == 1);
  CHECK(race.entries()[1].last.source == "sacct");
  CHECK(stats->cancelled == std::vector<std::string>{"21"});
}

TEST_CASE("monitor: a job that failed within its first second, between polls, still won (it had nodes)")
{
  FakeRunner r;
  FakeClock clock;
  // `exit 3` at once: squeue -t all shows FAILED, elapsed 0:00, but with its node.
  r.expect(is_squeue,
           FakeRunner::reply(
               0, row("31", "PENDING", "Resources") +
                      "32|FAILED|NonZeroExitCode|gpu-a6000|a6000-1|1|N/A|N/A|5:00|0:00|gres:gpu:a6000:1|rv-x\n"));
  r.expect_prefix({"scancel", "--me", "31"}, FakeRunner::reply(0));
  auto race = race_of({"31", "32"});
  auto stats = run_race(r, clock, race, {});
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 1);
  CHECK(stats->cancelled == std::vector<std::string>{"31"});
}

TEST_CASE("monitor: a job gone from squeue that scontrol shows done in 0 s on a node still won")
{
  // Captured on the testbed: COMPLETED, RunTime=00:00:00, NodeList=cpu-1.
  std::ifstream in(std::filesystem::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "scontrol_show_job.completed.txt");
  const std::string completed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(completed.find("RunTime=00:00:00") != std::string::npos);
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("1", "PENDING", "Resources")));
  r.expect_prefix({"scontrol", "show", "job", "2"}, FakeRunner::reply(0, completed));
  r.expect(is_sacct, FakeRunner::reply(0, ""));
  r.expect_prefix({"scancel", "--me", "1"}, FakeRunner::reply(0));
  auto race = race_of({"1", "2"});
  auto stats = run_race(r, clock, race, {});
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 1);
  CHECK(race.entries()[1].last.source == "scontrol");
  CHECK(race.entries()[1].last.nodes == "cpu-1");
  CHECK(stats->cancelled == std::vector<std::string>{"1"});
}

TEST_CASE("monitor: an interrupt cancels every job of the request and says so")
{
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("31", "PENDING", "Resources") + row("32", "PENDING", "Priority")));
  r.expect_prefix({"scancel", "--me", "31", "32"}, FakeRunner::reply(0));
  auto race = race_of({"31", "32"});
  MonitorOptions opts;
  opts.on_update = [](const Race&, const RaceDecision&) { raise_interrupt(SIGINT); };
  auto stats = run_race(r, clock, race, opts);
  clear_interrupt();
  REQUIRE_FALSE(stats);
  CHECK(stats.error().code == ErrorCode::interrupted);
  CHECK(stats.error().message.find("cancelled 31 32") != std::string::npos);
  CHECK(r.all_consumed());
}

TEST_CASE("monitor: a timeout cancels everything, all failing is an error naming each")
{
  {
    FakeRunner r;
    FakeClock clock;
    for (int i = 0; i < 3; ++i) {
      r.expect(is_squeue, FakeRunner::reply(0, row("41", "PENDING", "Resources")));
    }
    r.expect_prefix({"scancel", "--me", "41"}, FakeRunner::reply(0));
    auto race = race_of({"41"});
    MonitorOptions opts;
    opts.timeout = std::chrono::milliseconds(2500);
    auto stats = run_race(r, clock, race, opts);
    REQUIRE_FALSE(stats);
    CHECK(stats.error().code == ErrorCode::timeout);
    CHECK(r.all_consumed());
  }
  {
    FakeRunner r;
    FakeClock clock;
    r.expect(is_squeue,
             FakeRunner::reply(0, row("51", "FAILED", "NonZeroExitCode") + row("52", "PENDING", "PartitionTimeLimit")));
    r.expect_prefix({"scancel", "--me", "52"}, FakeRunner::reply(0));
    auto race = race_of({"51", "52"});
    auto stats = run_race(r, clock, race, {});
    REQUIRE_FALSE(stats);
    CHECK(stats.error().message.find("PartitionTimeLimit") != std::string::npos);
    CHECK(stats.error().message.find("FAILED") != std::string::npos);
  }
}

TEST_CASE("monitor: polls back off to the cap, bounding controller calls per minute")
{
  FakeRunner r;
  FakeClock clock;
  const int polls = 40;
  for (int i = 0; i < polls; ++i) {
    r.expect(is_squeue, FakeRunner::reply(0, row("61", "PENDING", "Resources") + row("62", "PENDING", "Resources")));
  }
  r.expect_prefix({"scancel"}, FakeRunner::reply(0));
  auto race = race_of({"61", "62"});
  MonitorOptions opts;
  int seen = 0;
  opts.on_update = [&](const Race&, const RaceDecision&) {
    if (++seen == polls) {
      raise_interrupt(SIGTERM);
    }
  };
  auto stats = run_race(r, clock, race, opts);
  clear_interrupt();
  REQUIRE_FALSE(stats);
  // 40 polls took at least (1 + 1.3 + ... ) then 5 s each: far under 60 controller calls a minute.
  const double minutes = static_cast<double>(clock.slept_ms()) / 60000.0;
  CHECK(static_cast<double>(polls) / minutes < 15.0);
}

TEST_CASE("monitor: a poll keeps Slurm's start estimate of pending jobs and the run time of started ones")
{
  FakeRunner r;
  r.expect(is_squeue,
           FakeRunner::reply(
               0, "41|PENDING|Resources|gpu-a100||1|2026-11-22T09:00:00|N/A|1:00:00|0:00|gres:gpu:a100:1|rv-x\n"
                  "42|RUNNING|None|gpu-v100|v100-1|1|2026-11-22T08:00:00|N/A|1:00:00|12:34|gres:gpu:v100:1|rv-x\n"));
  auto views = poll_jobs(r, {"41", "42"}, 1'000'000);
  REQUIRE(views);
  CHECK((*views)["41"].start_estimate == "2026-11-22T09:00:00");
  CHECK((*views)["41"].elapsed_s == 0);
  CHECK((*views)["42"].start_estimate.empty()); // started: no estimate
  CHECK((*views)["42"].elapsed_s == 754);
  CHECK((*views)["42"].start_epoch == 1'000'000 - 754);
}

TEST_CASE("monitor with a claim: a started sibling wins only once it holds the claim")
{
  FakeRunner r;
  FakeClock clock;
  const std::vector<std::string> claim = {"cat", "/rv/requests/x/claim/owner"};
  // Poll 1: the worse-ranked 52 runs, 51 pends; no claim yet (52 is settling): nothing cancelled.
  r.expect(is_squeue, FakeRunner::reply(0, row("51", "PENDING", "Resources") + row("52", "RUNNING")));
  r.expect_prefix(claim, FakeRunner::reply(1, "", "No such file or directory"));
  // Poll 2: 51 started too (a tie); still no claim.
  r.expect(is_squeue, FakeRunner::reply(0, row("51", "RUNNING") + row("52", "RUNNING")));
  r.expect_prefix(claim, FakeRunner::reply(1, "", "No such file or directory"));
  // Poll 3: the guard gave the tie to 51 (ranked better); 52 yielded.
  r.expect(is_squeue, FakeRunner::reply(0, row("51", "RUNNING") + row("52", "CANCELLED")));
  r.expect_prefix(claim, FakeRunner::reply(0, "51\n"));
  auto race = race_of({"51", "52"});
  MonitorOptions opts;
  opts.claim_argv = claim;
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 0);
  CHECK(stats->cancelled.empty()); // 52 cancelled itself; rv never cancelled the winner
  CHECK(clock.slept_ms() == 2000); // looked again after initial_poll while waiting
}

TEST_CASE("monitor with a claim: the claimant wins even before squeue shows it started")
{
  FakeRunner r;
  FakeClock clock;
  const std::vector<std::string> claim = {"cat", "/rv/requests/x/claim/owner"};
  r.expect(is_squeue, FakeRunner::reply(0, row("61", "PENDING", "Resources") + row("62", "RUNNING")));
  r.expect_prefix(claim, FakeRunner::reply(0, "61\n"));
  r.expect_prefix({"scancel", "--me", "62"}, FakeRunner::reply(0));
  auto race = race_of({"61", "62"});
  MonitorOptions opts;
  opts.claim_argv = claim;
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 0);
  CHECK(stats->cancelled == std::vector<std::string>{"62"});
}

// N3: the siblings were cancelled while pending by the guard of a job rv never learnt of (its
// sbatch's answer was lost). Before, rv never read the claim (nothing it tracked had started) and
// ended with "every strategy ended without starting" while that job ran the command.
TEST_CASE("monitor with a claim: a claimant rv does not track is adopted and wins")
{
  FakeRunner r;
  FakeClock clock;
  const std::vector<std::string> claim = {"cat", "/rv/requests/x/claim/owner"};
  r.expect(is_squeue, FakeRunner::reply(0, row("81", "CANCELLED") + row("82", "CANCELLED")));
  r.expect_prefix(claim, FakeRunner::reply(0, "83\n"));
  auto race = race_of({"81", "82"});
  MonitorOptions opts;
  opts.claim_argv = claim;
  std::string adopted;
  opts.on_update = [&](const Race&, const RaceDecision& d) {
    if (!d.adopted.empty()) {
      adopted = d.adopted;
    }
  };
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(adopted == "83");
  REQUIRE(race.winner());
  CHECK(race.entries()[*race.winner()].job_id == "83");
  CHECK(stats->cancelled.empty());
}

TEST_CASE("monitor with a claim: no claim within claim_wait falls back to start time and rank")
{
  FakeRunner r;
  FakeClock clock;
  const std::vector<std::string> claim = {"cat", "/rv/requests/x/claim/owner"};
  MonitorOptions opts;
  opts.claim_argv = claim;
  opts.claim_wait = std::chrono::milliseconds(2500);
  for (int i = 0; i < 4; ++i) { // t = 0, 1, 2, 3 s: the last one is past claim_wait
    r.expect(is_squeue, FakeRunner::reply(0, row("71", "PENDING", "Resources") + row("72", "RUNNING")));
    r.expect_prefix(claim, FakeRunner::reply(1));
  }
  r.expect_prefix({"scancel", "--me", "71"}, FakeRunner::reply(0));
  auto race = race_of({"71", "72"});
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 1);
}

// Seen on the testbed: the winner's guard had cancelled the loser a moment before rv's own
// scancel --name, which Slurm 22.05 then refuses with exit 1 (docs/slurm-quirks.md).
TEST_CASE("monitor: scancel --name of a job that already ended is not a failure, other errors are")
{
  CHECK(only_gone_jobs("scancel: error: Kill job error on job id 1305: Invalid job id specified\n"));
  CHECK(only_gone_jobs("scancel: error: Kill job error on job id 1: Invalid job id specified\n"
                       "scancel: error: Kill job error on job id 2: Invalid job id specified\n"));
  CHECK_FALSE(only_gone_jobs(""));
  CHECK_FALSE(only_gone_jobs("scancel: error: Kill job error on job id 1: Invalid job id specified\n"
                             "scancel: error: Unable to contact slurm controller (connect failure)\n"));
  rv::test::FakeRunner r;
  r.expect_prefix(
      {"scancel", "--me", "--name=train", "1305"},
      rv::test::FakeRunner::reply(1, "", "scancel: error: Kill job error on job id 1305: Invalid job id specified\n"));
  CHECK(cancel_jobs(r, {"1305"}, "train"));
  r.expect_prefix(
      {"scancel", "--me", "--name=train", "1306"},
      rv::test::FakeRunner::reply(1, "", "scancel: error: Unable to contact slurm controller (connect failure)\n"));
  auto down = cancel_jobs(r, {"1306"}, "train");
  REQUIRE_FALSE(down);
  CHECK(down.error().message.find("Unable to contact slurm controller") != std::string::npos);
  r.expect_prefix(
      {"scancel", "--me", "1307"},
      rv::test::FakeRunner::reply(1, "", "scancel: error: Kill job error on job id 1307: Invalid job id specified\n"));
  CHECK_FALSE(cancel_jobs(r, {"1307"})); // without the name, an invalid id is an error as before
}

// #15 defect 10: Slurm reuses job ids. A row with another job name is another job; of several
// accounting records of one id, the latest with the right name is the one rv believes.
TEST_CASE("monitor: poll_jobs does not believe a reused job id")
{
  rv::test::FakeRunner r;
  // squeue: id 11 is now someone else's RUNNING job named "other".
  r.expect([](const auto& a) { return std::find(a.begin(), a.end(), "squeue") != a.end(); },
           rv::test::FakeRunner::reply(0, "11|RUNNING|None|p|n9|1|N/A|N/A|1:00:00|0:05|N/A|other\n"));
  r.expect([](const auto& a) { return std::find(a.begin(), a.end(), "scontrol") != a.end(); },
           rv::test::FakeRunner::reply(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  // sacct: the old record of our job (CANCELLED), then a newer one of another job with that id.
  r.expect(
      [](const auto& a) { return std::find(a.begin(), a.end(), "sacct") != a.end(); },
      rv::test::FakeRunner::reply(0, "11|CANCELLED by 0|0:0|00:00:00|None|2026-11-22T05:00:00|None assigned||p|train\n"
                                     "11|RUNNING|0:0|00:00:05|2026-11-22T06:00:00|Unknown|n9||p|other\n"));
  auto views = poll_jobs(r, {"11"}, 1'800'000'000, nullptr, {{"11", "train"}});
  REQUIRE(views);
  CHECK(r.all_consumed());
  REQUIRE(views->count("11") == 1);
  CHECK(views->at("11").state == JobState::cancelled);
  CHECK(views->at("11").source == "sacct");
}

TEST_CASE("monitor with a claim: between polls rv waits on the login node for the claim, not here")
{
  FakeRunner r;
  FakeClock clock;
  const std::vector<std::string> claim = {"cat", "/rv/requests/x/claim/owner"};
  std::vector<long long> waits; // the pauses rv handed to the login node
  auto is_wait = [&](const std::vector<std::string>& argv) {
    if (argv.size() < 2 || argv[0] != "wait-for-claim") {
      return false;
    }
    waits.push_back(std::stoll(argv[1]));
    return true;
  };
  // Poll 1: both pend; rv waits (1 s) on the login node. Poll 2: 92 runs, no claim yet (settling):
  // the claim is due soon, a short wait (initial poll). Poll 3: claimed; 91 cancelled.
  r.expect(is_squeue, FakeRunner::reply(0, row("91", "PENDING", "Resources") + row("92", "PENDING", "Priority")));
  r.expect_prefix(claim, FakeRunner::reply(1, "", "No such file or directory")); // with the first poll
  r.expect(is_wait, FakeRunner::reply(0));
  r.expect(is_squeue, FakeRunner::reply(0, row("91", "PENDING", "Resources") + row("92", "RUNNING")));
  r.expect_prefix(claim, FakeRunner::reply(1, "", "No such file or directory"));
  r.expect(is_wait, FakeRunner::reply(0));
  r.expect(is_squeue, FakeRunner::reply(0, row("91", "PENDING", "Resources") + row("92", "RUNNING")));
  r.expect_prefix(claim, FakeRunner::reply(0, "92\n"));
  r.expect_prefix({"scancel", "--me", "91"}, FakeRunner::reply(0));
  auto race = race_of({"91", "92"});
  MonitorOptions opts;
  opts.claim_argv = claim;
  opts.poll = {std::chrono::milliseconds(1000), std::chrono::milliseconds(5000), 1.3};
  opts.wait_for_claim = wait_for_claim;
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  REQUIRE(race.winner());
  CHECK(*race.winner() == 1);
  CHECK(waits == std::vector<long long>{1000, 1000});
  CHECK(clock.slept_ms() == 0); // every pause was the login node's
}

TEST_CASE("monitor with a claim: a wait that cannot run sleeps here instead")
{
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("95", "PENDING", "Resources")));
  r.expect_prefix({"cat"}, FakeRunner::reply(1, "", "No such file or directory")); // with the first poll
  r.expect([](const std::vector<std::string>& argv) { return !argv.empty() && argv[0] == "wait-for-claim"; },
           FakeRunner::reply(255, "", "connection lost"));
  r.expect(is_squeue, FakeRunner::reply(0, row("95", "RUNNING")));
  r.expect_prefix({"cat"}, FakeRunner::reply(0, "95\n"));
  auto race = race_of({"95"});
  MonitorOptions opts;
  opts.claim_argv = {"cat", "/rv/requests/y/claim/owner"};
  opts.wait_for_claim = wait_for_claim;
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  REQUIRE(race.winner());
  CHECK(clock.slept_ms() == 1000);
}

// Issue #38 item 7: the first poll reads the claim in squeue's round trip; the wait on the login
// node leads the next poll's batch, so the claim that ends it is read with squeue at once; the
// winner's node is read in the losers' scancel round trip. From the claim's appearance to the
// decision: the rest of the batch, then one round trip (before: 4 round trips).
TEST_CASE("monitor with a claim: the wait leads the poll's batch, the claim rides with squeue, the winner's read with "
          "scancel")
{
  FakeClock clock;
  int squeues = 0;
  rv::test::RecordingRunner r([&](const proc::Command& c) {
    if (is_squeue(c.argv)) {
      return ++squeues == 1 ? FakeRunner::reply(0, row("31", "PENDING", "Resources") + row("32", "PENDING", "Priority"))
                            : FakeRunner::reply(0, row("31", "PENDING", "Resources") + row("32", "RUNNING"));
    }
    if (c.argv.front() == "cat") {
      return squeues == 1 ? FakeRunner::reply(1) : FakeRunner::reply(0, "32\n");
    }
    if (c.argv.front() == "scontrol") {
      return FakeRunner::reply(0, "NodeName=a100-1 Gres=gpu:a100:4\n");
    }
    return FakeRunner::reply(0); // the wait (ends at once: the claim is there) and scancel
  });
  auto race = race_of({"31", "32"});
  MonitorOptions opts;
  opts.claim_argv = {"cat", "/rv/requests/z/claim/owner"};
  opts.wait_for_claim = wait_for_claim;
  std::string read_for;
  opts.winner_read = [&](const RaceEntry& w) -> std::optional<proc::Command> {
    read_for = w.job_id + "@" + w.last.nodes;
    proc::Command c;
    c.argv = {"scontrol", "show", "node", w.last.nodes};
    return c;
  };
  std::string node_answer;
  opts.on_winner_read = [&](const proc::Outcome& o) { node_answer = o.out; };
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  REQUIRE(race.winner());
  CHECK(race.entries()[*race.winner()].job_id == "32");
  CHECK(stats->cancelled == std::vector<std::string>{"31"});
  CHECK(read_for == "32@a100-1");
  CHECK(node_answer.starts_with("NodeName=a100-1"));
  std::vector<std::string> firsts;
  for (const auto& c : r.recorded()) {
    firsts.push_back(c.argv.front());
  }
  // [squeue, cat] (none yet), [the wait, squeue, cat], then [scancel, scontrol].
  CHECK(firsts == std::vector<std::string>{"env", "cat", "wait-for-claim", "env", "cat", "scancel", "scontrol"});
  CHECK(r.round_trips() == 3);
  CHECK(clock.slept_ms() == 0);
}

TEST_CASE("monitor with a claim: with no loser left to cancel, the winner's read does not ride and is not reported")
{
  FakeClock clock;
  FakeRunner r;
  r.expect(is_squeue, FakeRunner::reply(0, row("41", "RUNNING")));
  r.expect_prefix({"cat"}, FakeRunner::reply(0, "41\n"));
  auto race = race_of({"41"});
  MonitorOptions opts;
  opts.claim_argv = {"cat", "/rv/requests/w/claim/owner"};
  bool asked = false, reported = false;
  opts.winner_read = [&](const RaceEntry&) -> std::optional<proc::Command> {
    asked = true;
    return std::nullopt;
  };
  opts.on_winner_read = [&](const proc::Outcome&) { reported = true; };
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.unexpected().empty());
  CHECK(r.all_consumed());
  CHECK_FALSE(asked);
  CHECK_FALSE(reported);
}

// The batch the wait leads cannot run (the connection failed under it): as a wait alone that could
// not run, the rest of the pause is slept here, then a poll of its own.
TEST_CASE("monitor with a claim: a poll batch led by a wait that cannot run sleeps the pause here, then polls")
{
  FakeRunner r;
  FakeClock clock;
  r.expect(is_squeue, FakeRunner::reply(0, row("96", "PENDING", "Resources")));
  r.expect_prefix({"cat"}, FakeRunner::reply(1, "", "No such file or directory"));
  // The wait is not scripted: the fake runner fails it, and with it the batch.
  r.expect(is_squeue, FakeRunner::reply(0, row("96", "RUNNING")));
  r.expect_prefix({"cat"}, FakeRunner::reply(0, "96\n"));
  auto race = race_of({"96"});
  MonitorOptions opts;
  opts.claim_argv = {"cat", "/rv/requests/v/claim/owner"};
  opts.wait_for_claim = wait_for_claim;
  auto stats = run_race(r, clock, race, opts);
  REQUIRE(stats);
  CHECK(r.all_consumed());
  REQUIRE(r.unexpected().size() == 1);
  CHECK(r.unexpected().front().front() == "wait-for-claim");
  REQUIRE(race.winner());
  CHECK(clock.slept_ms() == 1000);
}
