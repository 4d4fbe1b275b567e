#pragma once
// A user's request and the strategies the planner derives from it: produced by strategy/,
// rendered by templates/, submitted and raced by slurm/.

#include "core/model/container.hpp"
#include "core/model/shape.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::model {

// The most GPUs one request may ask for: more than any cluster has; the planner loops over the
// divisors of the count and multiplies it with per-node CPUs and memory.
inline constexpr int max_request_gpus = 100'000;

// What the user asked for. Unset optionals mean "rv decides".
struct JobRequest {
  int gpus = 1;
  std::optional<std::string> gpu_type; // as typed; may be an alias
  std::int64_t time_s = 3600;          // total work time wanted
  std::optional<std::int64_t> mem_mb;  // per node
  std::optional<int> cpus_per_task;    // per node (one task per node)
  std::optional<int> min_vram_gb;
  bool single_node = false;
  std::optional<int> nodes; // exactly this many nodes (--nodes); nullopt = the planner chooses
  bool allow_mig = true;
  bool allow_time_min = false;   // the job copes with a shortened limit
  bool allow_checkpoint = false; // opt-in (--checkpoint): the program saves and resumes its state
  std::string account;
  std::string qos;
  std::vector<std::string> exclude_nodes;
  std::string job_name; // Slurm job name; also keys the checkpoint dir
  // --container IMAGE [--container-mount ...] (docs/containers.md); nullopt = the node's own environment.
  std::optional<ContainerOrder> container;
};

enum class StrategyKind { direct, backfill, time_min, checkpoint };

// Where a strategy's wait estimate comes from: none (unknown), the probes (`sbatch --test-only`),
// rv's window model of the scheduler's queue, or both (they agree it starts now).
enum class WindowSource { none, probe, queue, probe_and_queue };

// The estimator that made a strategy's est_wait_s: none (no estimate), Slurm's plan as rv read it
// (the probes, the window model), or rv's replays of the queue (strategy/early_end.hpp).
enum class WaitModel { none, plan, replay };

// One way to run the request: a fully specified sbatch resource set plus estimates.
// Its shape (GPU type, partition, nodes, GPUs per node) is model::Shape.
struct Strategy : Shape {
  std::string id;         // s1, s2, ... in rank order
  std::string gres;       // e.g. "gpu:a100:4" (per node)
  std::string constraint; // --constraint, "" if none
  int cpus_per_task = 1;  // one task per node
  std::int64_t mem_mb_per_node = 0;
  std::int64_t walltime_s = 0;   // --time
  std::int64_t time_min_s = 0;   // --time-min, 0 = unset
  std::int64_t total_time_s = 0; // the work the user asked for (> walltime for checkpoint)
  StrategyKind kind = StrategyKind::direct;
  std::optional<std::int64_t> est_wait_s; // nullopt = unknown
  double est_su = 0;
  std::string label;
  std::vector<std::string> reasons; // why it exists and how it was sized, for --dry-run
  // Added by the planner (strategy/):
  int segments = 1;                                // checkpoint: segments of walltime_s planned to cover total_time_s
  std::string account;                             // --account ("" = none): request, else profile default, else cluster
  std::string qos;                                 // --qos ("" = none)
  bool free = false;                               // the site profile marks the type free (est_su is 0)
  bool mig_like = false;                           // a MIG-like slice
  WindowSource window_source = WindowSource::none; // where its wait estimate comes from
  // Which estimator made est_wait_s, recorded with the prediction by its name (to_string: the
  // version of rv's replays): the history corrects an estimator only from its own past.
  WaitModel wait_model = WaitModel::none;
};

// Names a strategy kind as it appears in JSON and tables.
const char* to_string(StrategyKind kind);

// "probe", "queue", "probe+queue", "" (none): the plan JSON's `window_source` (docs/plan-json.md).
std::string_view to_string(WindowSource source);

// Whether the queue model vouches for the estimate (queue, probe_and_queue).
bool uses_queue(WindowSource source);

// The estimator's name as records and the plan JSON keep it: "plan", "replay-2" (the replay's
// name changes whenever its model does, so that the history of one version never corrects
// another: strategy/history.hpp), "" (none).
std::string_view to_string(WaitModel model);

} // namespace rv::model
