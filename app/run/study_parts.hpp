#pragma once
// The parts of a study's run (app/run/study_run.cpp) that a study across clusters
// (app/run/study_across.cpp) shares: adding workers from the kept scripts, the limits kept in the
// record, and -f's printing of the tasks' output.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "app/run/plan/planning.hpp"
#include "app/run/plan/study.hpp"
#include "app/run/study_run.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app::study_parts {

// Submits one more worker of each of `which` (indexes into `kinds`) from the kept scripts, each
// recorded before its sbatch; the workers submitted.
Result<int> add_workers(Env& env, RequestRecord& rec, const std::vector<study::WorkerKind>& kinds,
                        const std::vector<std::size_t>& which);

// The plan's worker strategies, the ones `which` names, with ids `<strategy>.w<n>` from `next` on.
PlanRun workers_plan(const PlanRun& base, const std::vector<model::Strategy>& strategies,
                     const std::vector<std::size_t>& which, int& next);

// One cluster's pool for a study: its plan, the plan's strategies that can be workers (and why the
// others cannot), and the pool the model chose among them.
struct PoolSide {
  PlanRun planned;
  std::vector<model::Strategy> strategies;
  std::vector<std::string> dropped;
  study::PoolPlan pool;
};

// The pool on `planned`'s cluster: its worker strategies, their free GPUs as the plan saw them
// (`in.kinds`), and study::plan_pool of them for tasks of `task_time_s`.
PoolSide pool_side(PlanRun planned, std::int64_t task_time_s, study::PoolInput in);

// The walltime, in Slurm's whole minutes, of a worker that holds `per_worker` tasks of
// `task_time_s` and its margin (set-up, claims, the end mark).
std::int64_t worker_walltime_s(std::int64_t task_time_s, int per_worker);

// How many tasks each first worker is asked to hold: the study shared out over the workers the
// pool submits, at least 2.
int first_worker_share(int tasks, std::size_t workers);

// Workers that hold several tasks keep claiming once they start (no new wait per task), but a
// longer walltime fits fewer backfill windows: `longer` is the plan for workers of `per_worker`
// tasks (`walltime_s`); its pool replaces `side`'s when the model expects it to do at least as well
// (study::PoolPlan::score). Either way a note of the pool's says which was kept and why.
void keep_longer_if_better(PoolSide& side, Result<PlanRun> longer, const study::PoolInput& in, std::int64_t task_time_s,
                           int per_worker, std::int64_t walltime_s);

// Keeps in the record, for each worker strategy, the free GPUs the plan saw (the top-ups' room).
void record_slots(RequestRecord& rec, const PoolSide& side);

// The request's workers pending or running, less those in `ended` (their end marked: they claim no
// more tasks while Slurm may still say they run).
int alive_workers(const RequestRecord& rec, const std::set<std::string>& ended = {});

// Each kept worker strategy's part of the pool (study::KindPool: running, pending and for how
// long, the free GPUs the plan saw), from the request's jobs at `now`; the jobs in `ended` count
// as ended. With the study's `tasks`, each running worker's task in flight and time left (busy).
std::vector<study::KindPool> kind_pools(const RequestRecord& rec, const std::vector<study::WorkerKind>& kinds,
                                        std::int64_t now, const std::set<std::string>& ended = {},
                                        const std::vector<study::TaskStatus>& tasks = {});

// Cancels every pending worker of `rec` on `env`'s cluster (nothing left to claim, or the study is
// over) and records them cancelled; a failed scancel is logged and leaves them to the next look.
void cancel_idle_workers(Env& env, RequestRecord& rec);

// Ctrl-C in `rv run -f` of a study: a background rv (`rv _settle ID`) takes over what the
// foreground rv did (`what`: tops the pool up, offers the tasks), as after `rv run` without -f,
// and one line on stderr says so, or how to start it when it could not be started. The
// interrupted failure to return.
std::unexpected<Error> hand_to_background(Env& env, const std::string& id, std::string_view what);

// The limits a study's pool respects, as the record keeps them (its cluster's), and their JSON.
model::UserLimits study_limits(const RequestRecord& rec);
nlohmann::json limits_json(const model::UserLimits& l);

// -f's view of each task's log: the attempt read and how far, and the partial last line.
struct TaskLog {
  int attempt = 0;
  std::size_t offset = 0;
  std::string partial;
  bool ended_shown = false;
};

// Prints `text` of task `t`, each whole line prefixed `[t] ` (unless `no_prefix`).
void print_task_output(Env& env, TaskLog& log, int t, std::string_view text, bool no_prefix, bool flush);

std::string task_time_text(const study::TaskStatus& t);
std::string exit_text(const study::TaskStatus& t);

// Where -f reads the tasks' logs: a cluster's Env, the study's task directory there, and the host
// named in -f's lines (empty for a study on one cluster: its lines name none).
struct TaskPlace {
  Env* env = nullptr;
  std::string dir;
  std::string host;
};

// One round of -f's output, on one cluster or across: every started task's new output (a new
// attempt announced, its log read from the start), one batch per cluster, then each task's end,
// once. `where[i]`: the place of task i's latest attempt (none: not started anywhere). A cluster
// that does not answer is read again at the next round, from the same offset.
void show_task_round(Env& env, std::map<int, TaskLog>& logs, const std::vector<study::TaskStatus>& tasks,
                     const study::Counts& counts, const std::vector<TaskPlace>& places,
                     const std::vector<std::optional<std::size_t>>& where, bool no_prefix);

} // namespace rv::app::study_parts
