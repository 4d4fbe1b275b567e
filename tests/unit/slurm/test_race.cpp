#include "slurm/pending_reason.hpp"
#include "slurm/race.hpp"

#include <doctest/doctest.h>

using namespace rv::slurm;

namespace {
Race make_race(int n)
{
  std::vector<RaceEntry> entries;
  for (int i = 1; i <= n; ++i) {
    entries.push_back(RaceEntry{"s" + std::to_string(i), std::to_string(100 + i), {}, false, {}});
  }
  return Race(std::move(entries));
}

JobView view(JobState s, std::int64_t start = 0, std::string reason = {}, std::string source = "squeue")
{
  JobView v;
  v.state = s;
  v.reason = std::move(reason);
  v.nodes = start ? "a100-1" : "";
  v.start_epoch = start;
  v.source = std::move(source);
  return v;
}
} // namespace

TEST_CASE("race: the first sibling to run wins and every other one is cancelled, running ones too")
{
  auto race = make_race(3);
  auto d = race.observe(
      {{"101", view(JobState::pending)}, {"102", view(JobState::pending)}, {"103", view(JobState::pending)}});
  CHECK_FALSE(d.new_winner);
  CHECK(d.cancel.empty());
  d = race.observe(
      {{"101", view(JobState::pending)}, {"102", view(JobState::running, 50)}, {"103", view(JobState::pending)}});
  REQUIRE(d.new_winner);
  CHECK(*d.new_winner == 1);
  CHECK(d.cancel == std::vector<std::string>{"101", "103"});
  // Later polls never cancel twice nor change the winner.
  d = race.observe({{"101", view(JobState::running, 60)}, {"102", view(JobState::running, 50)}});
  CHECK_FALSE(d.new_winner);
  CHECK(d.cancel.empty());
  CHECK(*race.winner() == 1);
}

TEST_CASE("race: a job that completed between polls is found as the winner")
{
  auto race = make_race(2);
  auto d = race.observe({{"101", view(JobState::pending)}, {"102", view(JobState::completed, 40, {}, "sacct")}});
  REQUIRE(d.new_winner);
  CHECK(*d.new_winner == 1);
  CHECK(d.cancel == std::vector<std::string>{"101"});
}

// #15 campaign (fs_full during the race): the winner's claim file could not be written, rv waited
// for the claim, and when every sibling had ended it said none had started, though one had run.
TEST_CASE("race: while waiting for a claim, a sibling that ran and ended wins once every sibling has ended")
{
  auto race = make_race(2);
  auto d = race.observe({{"101", view(JobState::running, 40)}, {"102", view(JobState::pending)}}, "", false);
  CHECK_FALSE(d.new_winner); // started, not yet claimed: rv waits for the claim
  d = race.observe({{"101", view(JobState::completed, 40)}, {"102", view(JobState::cancelled)}}, "", false);
  REQUIRE(d.new_winner);
  CHECK(*d.new_winner == 0);
  CHECK_FALSE(d.all_failed);
}

TEST_CASE("race: ties go to the claimant, then the earliest start, then the better rank")
{
  {
    auto race = make_race(2);
    std::map<std::string, JobView> v = {{"101", view(JobState::running, 10)}, {"102", view(JobState::running, 10)}};
    CHECK(race.needs_claimant(v));
    auto d = race.observe(v, "102");
    CHECK(*d.new_winner == 1);
    CHECK(d.cancel == std::vector<std::string>{"101"});
  }
  {
    auto race = make_race(2);
    auto d = race.observe({{"101", view(JobState::running, 12)}, {"102", view(JobState::running, 11)}});
    CHECK(*d.new_winner == 1);
  }
  {
    auto race = make_race(2);
    auto d = race.observe({{"101", view(JobState::running, 11)}, {"102", view(JobState::running, 11)}});
    CHECK(*d.new_winner == 0);
  }
}

TEST_CASE("race: no record (accounting lag) is not a failure")
{
  auto race = make_race(2);
  auto d = race.observe({{"101", view(JobState::pending)}, {"102", JobView{}}});
  CHECK_FALSE(d.all_failed);
  CHECK(race.entries()[1].last.state == JobState::unknown);
  d = race.observe({{"101", view(JobState::failed, 0, "NonZeroExitCode")}});
  CHECK_FALSE(d.all_failed); // 102 still unknown: alive
}

TEST_CASE("race: everything failing ends the race without a winner")
{
  auto race = make_race(2);
  auto d = race.observe({{"101", view(JobState::failed)}, {"102", view(JobState::cancelled)}});
  CHECK_FALSE(d.new_winner);
  CHECK(d.all_failed);
  CHECK(d.cancel.empty());
}

TEST_CASE("race: a sibling stuck on a limit it can never meet is reported and cancelled")
{
  auto race = make_race(2);
  auto d = race.observe(
      {{"101", view(JobState::pending, 0, "QOSMaxGRESPerJob")}, {"102", view(JobState::pending, 0, "Priority")}});
  CHECK(d.newly_hopeless == std::vector<std::size_t>{0});
  CHECK(d.cancel == std::vector<std::string>{"101"});
  CHECK_FALSE(d.all_failed);
  d = race.observe({{"101", view(JobState::cancelled)}, {"102", view(JobState::pending, 0, "PartitionTimeLimit")}});
  CHECK(d.all_failed);
  CHECK(race.entries()[1].hopeless_reason == "PartitionTimeLimit");
}

TEST_CASE("race: cancel_all skips ended jobs and cancels once")
{
  auto race = make_race(3);
  race.observe({{"101", view(JobState::failed, 0)}, {"102", view(JobState::pending)}});
  auto ids = race.cancel_all();
  CHECK(ids == std::vector<std::string>{"102", "103"});
  CHECK(race.cancel_all().empty());
}

TEST_CASE("job states parse in every spelling")
{
  CHECK(parse_job_state("CANCELLED by 0") == JobState::cancelled);
  CHECK(parse_job_state("CANCELLED+") == JobState::cancelled);
  CHECK(parse_job_state("R") == JobState::running);
  CHECK(parse_job_state("OUT_OF_MEMORY") == JobState::out_of_memory);
  CHECK(parse_job_state("NODE_FAIL\r") == JobState::node_fail);
  CHECK(parse_job_state("weird") == JobState::unknown);
  CHECK(is_terminal(JobState::timeout));
  CHECK_FALSE(is_terminal(JobState::unknown));
  CHECK(is_hopeless_reason("PartitionTimeLimit"));
  CHECK_FALSE(is_hopeless_reason("Resources"));
  CHECK_FALSE(is_hopeless_reason("QOSMaxGRESPerUser"));
}

// N3: an sbatch whose answer was lost (killed by its timeout) may still have created its job; when
// that job starts first, its guard claims the request and cancels the tracked siblings while they
// pend. rv must follow that job, not report "every strategy ended without starting".
TEST_CASE("race: a claim owner that is no sibling is adopted and wins")
{
  auto race = make_race(2);
  std::map<std::string, JobView> v = {{"101", view(JobState::cancelled)}, {"102", view(JobState::cancelled)}};
  CHECK(race.cancelled_by_a_claim(v)); // nobody rv knows started, yet its siblings were cancelled
  CHECK_FALSE(race.needs_claimant(v, 1));
  auto d = race.observe(v, "107");
  CHECK(d.adopted == "107");
  REQUIRE(d.new_winner);
  REQUIRE(race.entries().size() == 3);
  CHECK(race.entries()[*d.new_winner].job_id == "107");
  CHECK(race.entries()[*d.new_winner].strategy_id == "orphan-107");
  CHECK_FALSE(d.all_failed);
  // A claim that is no job id is not adopted.
  auto other = make_race(2);
  CHECK(other.observe(v, "../etc").adopted.empty());
}
