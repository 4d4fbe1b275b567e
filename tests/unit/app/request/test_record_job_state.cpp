// A job's state in the request record is typed (slurm::JobState); the record's JSON keeps Slurm's
// names as before, so records written before the state was typed load the same, and a record
// written now reads the same to an older rv.

#include "app/request/requests.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace rv;
using namespace rv::app;

TEST_CASE("record job state: an old-format record loads, each state typed, and is written back the same")
{
  // As rv wrote records before the state was typed: Slurm's names, REFUSED for a refused sbatch,
  // "" before sbatch answered; an unknown name as Slurm printed it.
  const auto old = nlohmann::json::parse(R"({
    "id": "3f9c02ab", "schema": 2, "created_at": "2026-11-22T05:37:42Z", "host": "ssh rvtest@127.0.0.1:2222",
    "name": "rv-3f9c02ab", "state": "won", "winner": "s2",
    "jobs": [
      {"strategy_id": "s1", "job_id": "197", "state": "CANCELLED"},
      {"strategy_id": "s2", "job_id": "198", "state": "RUNNING", "node_list": "a100-1"},
      {"strategy_id": "s3", "job_id": "199", "state": "PENDING", "reason": "Priority"},
      {"strategy_id": "s4", "job_id": "", "error": "Invalid account", "state": "REFUSED"},
      {"strategy_id": "s5", "job_id": "", "state": ""},
      {"strategy_id": "s6", "job_id": "200", "state": "OUT_OF_MEMORY"},
      {"strategy_id": "s7", "job_id": "201", "state": "CANCELLED+"},
      {"strategy_id": "s8", "job_id": "202"}
    ]})");
  auto r = request_from_json(old);
  REQUIRE(r);
  REQUIRE(r->jobs.size() == 8);
  CHECK(r->jobs[0].state == slurm::JobState::cancelled);
  CHECK(r->jobs[1].state == slurm::JobState::running);
  CHECK(r->jobs[2].state == slurm::JobState::pending);
  CHECK(r->jobs[3].state == slurm::JobState::unknown); // refused: no job, its error kept
  CHECK(r->jobs[3].error == "Invalid account");
  CHECK(r->jobs[4].state == slurm::JobState::unknown); // not submitted yet
  CHECK(r->jobs[5].state == slurm::JobState::out_of_memory);
  CHECK(r->jobs[6].state == slurm::JobState::cancelled);
  CHECK(r->jobs[7].state == slurm::JobState::unknown); // no state field at all
  CHECK(r->winner_job()->state == slurm::JobState::running);

  // Written back: the same names (CANCELLED+ as Slurm's canonical CANCELLED).
  const auto j = to_json(*r);
  std::vector<std::string> names;
  for (const auto& job : j["jobs"]) {
    names.push_back(job["state"].get<std::string>());
  }
  CHECK(names == std::vector<std::string>{"CANCELLED", "RUNNING", "PENDING", "REFUSED", "", "OUT_OF_MEMORY",
                                          "CANCELLED", "UNKNOWN"});
  // And loaded again, the same states.
  auto again = request_from_json(j);
  REQUIRE(again);
  for (std::size_t i = 0; i < r->jobs.size(); ++i) {
    CAPTURE(i);
    CHECK(again->jobs[i].state == r->jobs[i].state);
    CHECK(state_name(again->jobs[i]) == state_name(r->jobs[i]));
  }
}
