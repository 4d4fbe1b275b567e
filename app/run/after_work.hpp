#pragma once
// What a command leaves for after its answer (app::AfterWork), done by a background rv that cli
// starts once the command has answered (cli/after_work.cpp): the association facts read again when
// due (app/run/plan/assoc_cache.hpp), and Slurm's own start estimates of the jobs just submitted, for
// `rv stats`' comparison with rv's predictions (docs/requests.md, "Predictions").

#include "app/env.hpp"

#include <string>
#include <vector>

namespace rv::app {

// Polls the still pending jobs of `request_ids` that have no Slurm estimate yet (one squeue for
// all; apply_view records the first estimate it sees) and saves the records; how many jobs got one.
Result<int> record_slurm_estimates(Env& env, const std::vector<std::string>& request_ids);

// Whether `work` has anything to do.
bool has_after_work(const AfterWork& work);

// Does `work`: the association facts first (when due), then, one backfill interval and a second
// after now (when Slurm's backfill pass has published its estimates), record_slurm_estimates; once
// more an interval later when a job still pends without one. Failures are only logged. Returns the
// jobs that got an estimate.
int run_after_work(Env& env, const AfterWork& work);

} // namespace rv::app
