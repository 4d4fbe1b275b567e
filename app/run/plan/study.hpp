#pragma once
// A study (docs/studies.md): one request whose N tasks (`rv run --array`, `--sweep`,
// `--sweep-file`) run on workers, each submitted job claiming the next unclaimed task in the
// request's directory on the cluster (templates/study.cpp). Everything here is pure: the grammar
// of the flags, the tasks and their commands, the pool of workers to submit within the user's
// limits, and what the cluster's task directory says.

#include "core/model/cluster.hpp"
#include "core/model/plan.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::app::study {

// Across clusters: how long a worker with no offer on its cluster waits for rv to make one (rv
// sees the worker start at its next poll, at most 15 s later) before it ends.
inline constexpr std::int64_t k_offer_wait_s = 45;

// The most tasks one study may have (a script carries every task's command).
inline constexpr int k_max_tasks = 10'000;

// `--array` as Slurm writes it: `0-15`, `1,3,8-10`, `0-31:2` (a step), `0-31%8` (at most 8 at
// once); `%8` alone caps a sweep. Ids ascending, each once.
struct ArraySpec {
  std::vector<int> ids;
  int max_running = 0; // %K; 0 = no cap
};
Result<ArraySpec> parse_array_spec(std::string_view spec);

// One `--sweep NAME=v1,v2`: NAME an identifier (its RV_SWEEP_NAME must be a variable name).
struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};
Result<SweepAxis> parse_sweep(std::string_view flag);

// One task's parameters, in the order the axes (or the file's keys) name them.
using Params = std::vector<std::pair<std::string, std::string>>;

// The cartesian product of the axes, the first axis varying slowest (a stable order).
std::vector<Params> cartesian(const std::vector<SweepAxis>& axes);

// `--sweep-file grid.json`: a JSON list of objects, each one task's parameters (strings, numbers
// or booleans, written as JSON writes them; keys sorted).
Result<std::vector<Params>> parse_sweep_file(std::string_view json_text);

// One parameter's value as a task gets it: a string as it is, a number or a boolean as JSON writes
// it (`3`, `0.0003`, `1e-05`, `true`); nullopt for anything else (null, a list, an object). The
// one rendering of --sweep-file's values and of a task file's [sweep] (cli/task_file.hpp).
std::optional<std::string> param_text(const nlohmann::json& value);

// --retries N: 0 to 100, else a usage error (`--retries 200: out of range`).
Result<void> check_retries(int retries);

struct Task {
  int id = 0;
  Params params;
  std::string command; // the command line with {task} and {NAME} replaced, shell-quoted
};

// Replaces `{task}` and each `{NAME}` of `params` in `line` with the value, shell-quoted; every
// other brace is left as it is (`${HOME}`, `{a,b}`).
std::string substitute(std::string_view line, int task_id, const Params& params);

// What the flags asked for, before the tasks are made.
// --prefer: how a study's pool weighs SU against time (docs/studies.md, "The pool"). `time` (the
// default) adds a dearer worker when it shortens the study by more than twice the share of SU it
// adds; `cost` only when by more than eight times (in practice: the cheapest GPUs that start, and
// pricier ones only when the cheap ones would make the study wait far longer).
enum class Prefer { time, cost };
Result<Prefer> parse_prefer(std::string_view word);
const char* to_string(Prefer p);
double su_weight(Prefer p);

struct StudyFlags {
  std::string array;               // --array SPEC ("" = none)
  std::vector<std::string> sweeps; // --sweep NAME=v1,v2 (repeatable)
  std::string sweep_file_text;     // the contents of --sweep-file ("" = none)
  std::string sweep_file;          // its path, for messages
  int retries = 1;                 // --retries N: a task a dying worker dropped runs again up to N times
  bool retry_failed = false;       // --retry-failed: also a task that failed by its own exit status
  std::string prefer;              // --prefer time|cost ("" = time)
  bool no_prefix = false;          // -f: task output without the `[7] ` prefix
  bool any() const { return !array.empty() || !sweeps.empty() || !sweep_file_text.empty(); }
};

// A study: its tasks and how they run.
struct Study {
  std::vector<Task> tasks;
  std::vector<std::string> names; // the sweep's parameter names (RV_SWEEP_<NAME>), in order
  int max_running = 0;            // %K; 0 = no cap
  int retries = 1;
  bool retry_failed = false;
  Prefer prefer = Prefer::time; // kept in the record only when `cost`: the top-ups weigh as the plan did
  std::int64_t task_time_s = 0; // --time: per task
  // Across clusters (docs/studies.md, "Across clusters"): a worker takes only a task rv offered
  // on its cluster (`tasks/<t>/offer`), never one by itself. Kept in the record only when set.
  bool offers = false;
};

// The tasks of `flags` for the command line `line`; a usage error (one line and a hint) for a bad
// spec, an empty or too large study, or --array together with a sweep (except `--array %K`).
Result<Study> make_study(const StudyFlags& flags, const std::string& line, std::int64_t task_time_s);

// The environment variable of sweep parameter `name`: RV_SWEEP_<NAME, upper case>.
std::string sweep_variable(std::string_view name);

// The study as the request record keeps it ("study", docs/requests.md), and back.
nlohmann::json to_json(const Study& s);
Result<Study> study_from_json(const nlohmann::json& j);

// ---- the pool of workers -------------------------------------------------------------------

// A running worker as a top-up sees it: how long the task it runs has run, and its allocation's
// time left.
struct BusyWorker {
  std::int64_t task_ran_s = -1; // -1: no task in flight (it claims the next at once)
  std::int64_t left_s = -1;     // -1: unknown (its walltime holds as many tasks as a new one's)
};

// One worker strategy's part of the pool as it stands (the same order as the ranked strategies).
struct KindPool {
  int pending = 0;                // this study's workers of the strategy, pending
  int running = 0;                // and running
  std::int64_t pending_for_s = 0; // how long its oldest pending worker has waited
  std::int64_t waited_s = 0;      // the longest any of its workers pended without starting (alive, or
                                  // cancelled while pending): past its expected wait, the strategy is late
  int slots = -1;                 // workers the plan saw free GPUs for at once; -1 = unknown
  int group = 0;                  // across clusters: its cluster (PoolInput::group_room)
  // The running workers, one each, when the top-up knows them (else each is half way through a task).
  std::vector<BusyWorker> busy;
};

// What the pool is planned from: the tasks not yet ended, the request's workers alive, and the
// user's limits (MaxSubmitJobs, MaxJobs, GrpTRES gres/gpu as discovery reads them).
struct PoolInput {
  int unfinished = 0;       // tasks neither done nor failed for good (in flight included)
  int unclaimed = -1;       // of those, the tasks no worker runs now; -1 = all unfinished
  int workers_alive = 0;    // this study's jobs pending or running
  int max_running = 0;      // %K; 0 = none
  model::UserLimits limits; // max_submit_jobs, max_jobs, max_gpus
  int other_jobs = 0;       // the user's other jobs pending or running (they count against the limits)
  int headroom = 1;         // jobs left free for the user's own work
  double task_s = 0;        // how long the study's ended tasks took (the median); 0 = unknown: --time
  double su_weight = 2.0;   // SU against time (su_weight(Prefer)): the score's log(SU) weight
  // Across clusters (plan_pool_across): per group (cluster), how many more workers its own limits
  // let it have, kept pending ones included; empty = one cluster, no groups.
  std::vector<int> group_room;
  std::vector<KindPool> kinds; // per ranked strategy; missing = none alive, room unknown
};

struct PoolPlan {
  std::vector<std::size_t> submit; // indexes into the ranked strategies, one per new worker
  std::vector<int> cancel;         // per ranked strategy: how many of its pending workers to cancel
  int target = 0;                  // the most workers the limits let the pool have alive
  std::vector<std::string> notes;  // why the target is what it is
  double makespan_s = 0;           // the model's expected time until the last task ends (from now)
  double su = 0;                   // its expected SU for the tasks not yet claimed
  double score = 0;                // what the pool minimises: log(time) + su_weight * log(SU) (docs/studies.md)
};

// How much the pool weighs SU against time: a worker is worth adding when it shortens the expected
// makespan by more than this many times the share of SU it adds (docs/studies.md): --prefer time
// (the default) and --prefer cost.
inline constexpr double k_su_weight = 2.0;
inline constexpr double k_su_weight_cost = 8.0;
// What a new worker takes beyond its strategy's wait before it claims a task: sbatch, Slurm's
// scheduling pass, the job's start and the worker's set-up (seconds; the testbed's are 2-5 s).
inline constexpr double k_worker_start_s = 5.0;
// How long a worker's end waits for the top-up that replaces it: the background rv waits on the
// workers' marks (a second), `rv run -f` polls at most every 5 s.
inline constexpr double k_topup_s = 5.0;

// The pool's ceiling alone (plan_pool's `target` and its notes): the unfinished tasks capped by
// %K and the limits less the user's other jobs and the headroom; nothing is modelled.
PoolPlan pool_ceiling(const std::vector<model::Strategy>& ranked, const PoolInput& in);

// How many workers of which strategies to submit now, and which pending ones to cancel.
// `ranked`: the worker strategies, best first. The pool's ceiling is pool_ceiling's. Within it, workers are
// added one at a time where the model of the study (each worker starting at its strategy's
// expected wait and claiming tasks back to back; docs/studies.md) gains the most, while it gains;
// a strategy takes at most as many as the plan saw free GPUs for (one pending at a time beyond
// them, or when unknown), and one whose workers pend past their expected wait counts as late.
// Pending workers that the model gives no task are cancelled.
PoolPlan plan_pool(const std::vector<model::Strategy>& ranked, std::int64_t task_time_s, const PoolInput& in);

// How many workers of strategy `s` the cluster `c` has free GPUs for now: on the usable nodes of
// its partition, the GPUs of its type not allocated, in workers of its GPUs per node.
int free_slots(const model::Cluster& c, const model::Strategy& s);
// Before any worker: each strategy's KindPool with its free slots (what plan_pool wants for a new
// study; without it a strategy gets one worker at a time).
std::vector<KindPool> free_kinds(const model::Cluster& c, const std::vector<model::Strategy>& strategies);

// How many tasks each of `workers` workers is sized for: the tasks shared out, rounded up (1 when
// there are workers enough).
int tasks_per_worker(int tasks, int workers);

// The strategies a worker may use: single node, no checkpoint segments, a walltime that holds
// one task; the others dropped with a reason each.
std::vector<model::Strategy> worker_strategies(const std::vector<model::Strategy>& ranked, std::int64_t task_time_s,
                                               std::vector<std::string>& dropped);

// ---- the workers' scripts, kept in the record for top-ups --------------------------------------

// A worker's strategy id is `<strategy>.w<n>`: the strategy it copies.
std::string base_strategy_id(std::string_view worker_id);

// Keeps `script`, the rendered worker of strategy `s` (the first of its copies), in the record's
// study JSON under "workers", in the plan's rank order: a top-up (the foreground -f, the
// background rv, on any machine that has the record) submits it again without re-planning. A
// script holds no secret (they stay in the request's 0600 env file).
void add_worker_script(nlohmann::json& study_json, const model::Strategy& s, const std::string& script);

struct WorkerKind {
  model::Strategy strategy; // id (the base), label, shape, walltime, est_wait_s, est_su
  std::string script;
  int slots = -1; // workers the plan saw free GPUs for ("slots" in the record); -1 = unknown
};
// The kept workers, in rank order (empty for a record without them).
std::vector<WorkerKind> worker_kinds(const nlohmann::json& study_json);

// ---- what the cluster says ---------------------------------------------------------------------

enum class TaskState { pending, running, done, failed, lost };
const char* to_string(TaskState s);

struct TaskStatus {
  int id = 0;
  TaskState state = TaskState::pending;
  int attempts = 0;
  std::string job_id;             // the job of the latest attempt
  std::optional<int> exit_status; // the latest attempt's, when it ended by itself
  std::int64_t started_at = 0;    // epoch seconds of the latest attempt's start (0 = unknown)
  std::int64_t ended_at = 0;
};

// The command that lists the task directory `<remote_root>/requests/<id>/tasks` in one round trip:
// one line per attempt `<task> <attempt> <job> <start> <exit> <end>` (`-` for what is missing).
proc::Command task_listing_command(const std::string& tasks_dir);

// A worker marks its start and its end in the task directory (`.started.<job>`, `.ended.<job>`:
// its tasks done, its walltime over, a signal), so a top-up can follow a worker's end at once
// instead of at its next poll (docs/studies.md, "Fan-out within the limits").
struct WorkerMarks {
  std::set<std::string> started;
  std::set<std::string> ended;
  bool read = false; // the listing answered (without it, nothing can be waited for)
  int count() const { return static_cast<int>(started.size() + ended.size()); }
};
// The command that lists the marks (`started <job>`, `ended <job>`), one round trip (batched with
// the task listing).
proc::Command worker_marks_command(const std::string& tasks_dir);
WorkerMarks parse_worker_marks(std::string_view out);
// The command that waits on the cluster, up to `seconds`, for a worker to start or end: it ends as
// soon as there are more than `known` marks and prints their number. One round trip, however
// long it waits; it reads the directory each second and asks Slurm nothing.
proc::Command worker_wait_command(const std::string& tasks_dir, int known, int seconds);

// The task directory of a request.
std::string tasks_dir(const std::string& remote_root, const std::string& request_id);
// The log of task `task`'s attempt `attempt`.
std::string task_log(const std::string& tasks_dir, int task, int attempt);

// Every task's status from the listing, given the job ids still alive (pending or running): an
// attempt without an exit whose job is not alive was lost (its worker died); a task whose attempts
// are used up after a loss, or that failed by its own exit status without --retry-failed (or with
// it, after its last attempt), is failed.
std::vector<TaskStatus> task_statuses(const Study& s, std::string_view listing, const std::set<std::string>& alive);

// The job ids that claimed an attempt of some task, from the listing.
std::set<std::string> claimer_jobs(std::string_view listing);

// The offers waiting on the cluster (a study across clusters): task -> the attempt offered, from
// the listing's `<task> offer <attempt>` lines.
std::map<int, int> open_offers(std::string_view listing);

struct Counts {
  int done = 0, running = 0, pending = 0, failed = 0;
};
Counts count(const std::vector<TaskStatus>& tasks);

// `rv logs REQ/7`, `REQ:7`: the request key and the task; nullopt when `key` names no task.
std::optional<std::pair<std::string, int>> split_task_key(std::string_view key);

} // namespace rv::app::study
