#pragma once
// What the scheduler itself knows about its queue, as rv's window model reads it: the running
// jobs with their nodes, GPUs and limit ends, the pending jobs with their priority, GPUs and the
// start and nodes backfill planned for them. Filled by slurm/queue, read by strategy/window_model.

#include "core/model/cluster.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::model {

// One running or pending job. Times are seconds from the snapshot (negative: already past).
struct QueuedJob {
  std::string id;
  std::string name;
  bool running = false; // false: pending
  std::string partition;
  std::vector<std::string> nodes;         // running: the allocation; pending: SchedNodeList; empty = unknown
  std::vector<GpuGres> gpus_per_node;     // from TRES per node
  bool gpus_known = false;                // false: the job's GPUs per node are unknown
  std::optional<std::int64_t> start_in_s; // pending: the start backfill planned; nullopt = none;
                                          // running: when it started (<= 0)
  std::optional<std::int64_t> end_in_s;   // running: when its limit ends; pending: planned end
  std::int64_t priority = 0;
  std::string reason; // pending: Slurm's reason
};

// The queue at one moment on the cluster's clock.
struct QueueSnapshot {
  bool known = false;         // false: not read (then the model has nothing to say)
  std::int64_t now_epoch = 0; // the cluster's clock when squeue ran
  std::vector<QueuedJob> jobs;
  std::vector<std::string> notes; // what could not be read, and why
};

} // namespace rv::model
