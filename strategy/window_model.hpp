#pragma once
// rv's own window model: from the scheduler's queue (running jobs' nodes, GPUs and limit ends,
// pending jobs' planned starts and nodes) and the nodes' GPUs in use now, which GPUs of a shape
// are idle now and until when: the planned start of a pending job that needs them. It sees the
// backfill window in front of a reservation that `sbatch --test-only` does not (docs/slurm-quirks.md).
// Pure: the queue's times are seconds from its snapshot.

#include "core/model/cluster.hpp"
#include "core/model/queue.hpp"
#include "strategy/enumerate.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rv::strategy {

// What the queue says about one candidate's shape.
struct QueueWindow : model::Shape {
  std::string candidate_id;
  bool idle_now = false;               // `nodes` nodes have gpus_per_node GPUs (and the CPUs, memory) free now
  std::optional<std::int64_t> until_s; // how long they stay free; nullopt = no queued job needs them
  std::int64_t snapshot_epoch = 0;     // the queue's clock: until_s counts from here (the backfill grid)
  int idle_gpus = 0;                   // GPUs of the type free now on the partition's usable nodes
  std::vector<std::string> node_names; // where it would start (idle_now)
  std::string ends_by;                 // the job whose planned start ends the window; "" = none
  std::string why;                     // one line for --dry-run
  // Filled by the planner: the walltime it sized to the window (0 = none), and where the probes
  // said otherwise ("" = they agree).
  std::int64_t walltime_s = 0;
  std::string disagreement;
};

// GPUs of `type` in a GRES list; "" counts every GPU. An untyped entry counts toward a typed
// shape only when `untyped_counts` (reservations: conservative; releases: only on one-type nodes).
int gpus_of(const std::vector<model::GpuGres>& list, const std::string& type, bool untyped_counts);

// Whether a job may start on the node (not down, drained, reserved, ...).
bool usable(const model::Node& n);

// The cluster's nodes and the queue's jobs by node name, built once per plan: a busy cluster's
// queue holds tens of thousands of jobs, and each candidate asks about its partition's nodes.
class QueueIndex {
public:
  QueueIndex(const model::Cluster& cluster, const model::QueueSnapshot& queue);
  const model::QueueSnapshot& queue() const { return queue_; }
  const model::Node* node(const std::string& name) const;                             // nullptr: not in the cluster
  const std::vector<const model::QueuedJob*>& jobs_on(const std::string& node) const; // in queue order

private:
  const model::QueueSnapshot& queue_;
  std::unordered_map<std::string, const model::Node*> nodes_;
  std::unordered_map<std::string, std::vector<const model::QueuedJob*>> jobs_;
};

// The window of `c` from `queue`. Conservative where the queue is vague: a pending job with a
// planned start but unknown GPUs takes every GPU of its nodes; a running job with unknown GPUs
// frees none; a node whose GPUs in use are unknown is not idle. Every pending job with a planned
// start counts as ahead of a new job (its priority is not known before submission).
QueueWindow queue_window(const model::Cluster& cluster, const QueueIndex& queue, const Candidate& c);
inline QueueWindow queue_window(const model::Cluster& cluster, const model::QueueSnapshot& queue, const Candidate& c)
{
  return queue_window(cluster, QueueIndex(cluster, queue), c);
}

} // namespace rv::strategy
