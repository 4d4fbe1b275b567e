#pragma once
// Finishing what a killed rv left behind: refresh the states of the stored requests' jobs,
// cancel the losers of requests whose winner is known, and find orphans by job name and comment.

#include "app/request/requests.hpp"
#include "core/clock.hpp"
#include "core/process/runner.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace rv::app {

struct ReapReport {
  std::vector<std::string> cancelled; // loser job ids cancelled now
  std::vector<std::string> orphans;   // job ids found by name that the record did not hold
  std::vector<std::string> notes;     // one line each, for stderr
};

// Refreshes `requests` (one squeue for all their jobs, scontrol/sacct for vanished ones),
// reaps losers and adopts orphans; saves every changed record.
Result<ReapReport> refresh_and_reap(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                                    std::vector<RequestRecord>& requests);

// Finds the jobs of a request that its record lacks (rv died or was interrupted while submitting):
// the user's own jobs with the request's job name and comment `rv:<id>`, added to `r.jobs` as
// strategy "orphan" (orphan_strategy_id). Returns their ids.
Result<std::vector<std::string>> adopt_orphans(proc::Runner& runner, RequestRecord& r);

// The strategy id for a job that rv tracks without having submitted it knowingly: "orphan", or
// "orphan-<job id>" when the record already has an "orphan" (strategy ids are unique per record).
std::string orphan_strategy_id(const RequestRecord& rec, const std::string& job_id);

// After a submission failed part-way (Ctrl-C, SIGHUP, a dropped connection, a timeout): finds the
// jobs sbatch had already created (adopt_orphans), cancels them and records the request as
// `final_state`. The record stays "submitting" while this runs and when the search cannot run, so
// the next `rv ps` searches again; jobs found but not cancelled leave it "submitted" (tracked).
// An sbatch that was already running when the round trip was cut off may create its job after the
// first search: the search is repeated after a gap until one finds nothing new.
// Returns one line saying what happened. Call it with no interrupt pending.
std::string settle_failed_submission(proc::Runner& runner, Clock& clock, store::RecordStore& store, RequestRecord& rec,
                                     RequestState final_state);

// settle_failed_submission searches at least twice, k_settle_gap apart, and stops once a search
// finds nothing new (at most k_settle_rounds searches).
inline constexpr int k_settle_rounds = 4;
inline constexpr std::chrono::milliseconds k_settle_gap{3000};

// Deletes the remote secrets file of every finished request in `requests` (every one with
// `force`: rv knows it ended) that still has one, in one command, and records that; a failure is
// logged, not returned (the file is 0600 in a 0700 directory).
void remove_secrets(proc::Runner& runner, store::RecordStore& store, std::vector<RequestRecord*> requests,
                    bool force = false);

// Tells whether every job of the request has ended (or none was ever submitted).
bool request_finished(const RequestRecord& r);

} // namespace rv::app
