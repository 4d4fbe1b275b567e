#pragma once
// `rv run --array/--sweep` (docs/studies.md): plan, submit a pool of workers within the user's
// limits, and with -f follow every task (output prefixed `[7] `), top the pool up as workers end,
// and end with a table of the tasks. Also what `rv ps` and `rv logs REQ/7` read of a study.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/launch/smart_exec.hpp"
#include "app/run/plan/study.hpp"
#include "core/model/plan.hpp"
#include "strategy/options.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// What the pipeline hands a study: the request, how to prepare the run (sync, --env, ...), the flags.
struct StudyOrder {
  model::JobRequest request;
  strategy::PlanOptions plan_options;
  bool dry_run = false;
  study::StudyFlags flags;
  std::function<Result<SmartRun>(Env&)> prepare;
  std::int64_t task_time_s = 0; // a task's --time in seconds as given (JobOrder::study_task_time_s)
};

// `rv run --array/--sweep CMD`: exits 0 once submitted; with `follow`, 0 only when every task
// succeeded (1 otherwise, 130 when interrupted: the study runs on).
Result<int> run_study(Env& env, const StudyOrder& order, const std::vector<std::string>& command, bool follow);

// `rv _settle REQ` for a study (the background rv `rv run` without -f leaves): tops the pool up
// as workers end, cancels the idle ones once every task ended, and records the study's end.
// Exits 0 at once when another rv tends the study (holds tending_lock_path).
Result<int> settle_study(Env& env, const std::string& request_id);

// `rv ps`: every unfinished study of this store that no rv tends (rv killed, the laptop asleep
// through its end, a settler that stopped) gets a background rv again; one line on stderr each.
void tend_untended_studies(Env& env);

// A study as the cluster knows it: the record's jobs refreshed (one poll) and its task directory
// read (one listing).
struct StudyView {
  study::Study study;
  std::vector<study::TaskStatus> tasks;
  study::Counts counts;
  int workers_pending = 0;
  int workers_running = 0;
  // Workers that FAILED without claiming a task (the study's directory not writable, the secrets
  // file gone, a module that does not load): past k_max_barren, no worker is added any more.
  std::vector<std::string> barren;
  // Across clusters: the offers waiting on this cluster, task -> attempt (study::open_offers).
  std::map<int, int> offers;
  // The user's jobs pending or running that are not this study's (`squeue --me`), when asked for.
  std::optional<int> other_jobs;
  // The workers' start and end marks in the task directory (study::WorkerMarks), read in the same
  // round trip: a worker marked ended claims no more, whatever Slurm says of its job yet.
  study::WorkerMarks marks;
};

inline constexpr std::size_t k_max_barren = 3;
// With `other_jobs`, the user's other jobs are read in the same round trip as the task directory.
Result<StudyView> read_study(Env& env, RequestRecord& rec, bool other_jobs = false);

// "3 done, 2 running, 1 pending, 0 failed of 6 tasks; workers: 2 running, 1 pending".
std::string study_counts_text(const StudyView& v);

// One line per task: id, state, attempts, job, time, exit status, command.
std::vector<std::string> study_task_lines(const RequestRecord& rec, const StudyView& v);

// `rv logs REQ/7`: task `task`'s output (its latest attempt); `follow` streams it until it ends;
// `tail` >= 0: only the last lines.
Result<int> show_task_log(Env& env, RequestRecord& rec, int task, bool follow, int tail);

} // namespace rv::app
