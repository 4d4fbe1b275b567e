#pragma once
// N3: an sbatch that timed out, was killed or gave an unreadable answer may have created its job
// all the same (slurmctld answers late under load). Before such a strategy is recorded REFUSED,
// rv searches for the request's jobs by their comment `rv:<id>`, as for a failed batch
// (app/reap.hpp), and tracks what it finds.

#include "app/request/requests.hpp"
#include "core/clock.hpp"
#include "core/process/runner.hpp"
#include "core/store/record_store.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace rv::app {

// Searches (adopt_orphans, repeated k_settle_gap apart until a search finds nothing new, at most
// k_settle_rounds times) for jobs of `rec` that its record lacks, after the sbatch of each job in
// `uncertain` (indices into rec.jobs, in submission order) left it open whether its job exists.
// When as many jobs turn up as there were uncertain answers, each goes to its strategy (job ids
// grow in submission order, and the sbatch calls run one after another); otherwise they stay
// strategy "orphan". Found jobs are tracked (PENDING or as squeue saw them), never cancelled: the
// batch succeeded and the race treats them as siblings. Returns one line saying what happened,
// "" when nothing was found; an error when the search could not run.
Result<std::string> track_uncertain_submissions(proc::Runner& runner, Clock& clock, RequestRecord& rec,
                                                const std::vector<std::size_t>& uncertain);

// What submit_request does with the uncertain answers: when another strategy got a job id, the
// found jobs are tracked (track_uncertain_submissions; a search that cannot run is a warning, the
// race adopts a job that claims the request later). When none did, the batch counts as failed:
// the found jobs are cancelled (settle_failed_submission) and the error says so; the caller then
// closes the request (its secrets file goes).
Result<void> settle_uncertain_submissions(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                                          RequestRecord& rec, const std::vector<std::size_t>& uncertain);

} // namespace rv::app
