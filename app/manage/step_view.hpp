#pragma once
// The steps of a request (`rv run --in`) for `rv ps REQUEST`, `rv stop REQUEST/step-N` and
// `rv logs REQUEST/step-N` (app/request/steps.hpp keeps them).

#include "app/env.hpp"
#include "app/manage/manage.hpp"
#include "app/request/steps.hpp"

#include <string>
#include <vector>

namespace rv::app {

// One step as `rv ps REQUEST` shows it.
struct StepRow {
  StepRecord step;
  std::string slurm_step; // J.S while it runs, else ""
  std::int64_t elapsed_s = 0;
};

// The steps of request `id`, refreshed: one squeue --steps per job they ran in; a step recorded
// running that Slurm no longer lists gets the exit status it left beside its log (done/failed), or
// `ended` when it left none (cancelled, or its allocation ended under it). Recorded.
Result<std::vector<StepRow>> list_steps(Env& env, const std::string& id);

// "step-2  running  412.3  a6000-1 1m05s  python eval.py" lines, one per step.
std::vector<std::string> step_lines(const std::vector<StepRow>& rows);

// Cancels step `n` of request `id` alone (its allocation goes on); false when it had ended.
Result<bool> stop_step(Env& env, const std::string& id, int n);

// The step's log (stdout, or stderr with req.err; node req.node's on several nodes; the last
// req.tail lines); with req.follow, streamed until the step ends, returning its exit status.
Result<int> show_step_logs(Env& env, const std::string& id, int n, const LogsRequest& req);

} // namespace rv::app
