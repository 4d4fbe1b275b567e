#pragma once
// Knobs of the planner, with the defaults rv ships. Documented in docs/plan-json.md.

#include "strategy/history.hpp"

#include <cstdint>
#include <vector>

namespace rv::strategy {

struct PlanOptions {
  int max_width = 8;                      // most strategies submitted; lowered by site limits
  int max_topologies = 3;                 // per (type, partition): the k-node splits with fewest nodes
  std::int64_t now_threshold_s = 300;     // a probe "starts now" when start - now <= this
  std::int64_t refine_resolution_s = 600; // the probe script refines the window to this
  std::int64_t min_segment_s = 1800;      // shortest checkpoint segment worth running
  std::int64_t checkpoint_margin_s = 600; // per segment: signal lead + save/restore overhead
  std::int64_t queue_latency_s = 30;      // queue windows: submission latency kept free before they close
  int mig_cpus = 2;                       // CPUs for a MIG-like slice (or its node share if smaller)
  std::int64_t mig_mem_mb = 16384;        // memory for a MIG-like slice (or its node share if smaller)
  // Coarse walltimes probed, capped by MaxTime and by the request (which is always probed).
  std::vector<std::int64_t> probe_grid = {1800, 3600, 7200, 14400, 28800, 57600, 86400, 172800};
  // What the user's past requests say about each partition's estimates (strategy/history.hpp):
  // systematic biases correct the waits before ranking. Empty = no history.
  std::vector<PartitionBias> history;
};

// The knobs for a cluster whose time runs `scale` times faster than the clock (the time-to-GPU
// benchmark's compressed workload, docs/benchmark-time-to-gpu.md; config `time_scale`): every
// duration above divided by `scale`, but never below what Slurm can express or the checkpoint
// template needs (walltimes are whole minutes; a segment needs 120 s, its margin 90 s of signal
// jitter and lead). scale 1 returns `o` unchanged.
PlanOptions compress_time(PlanOptions o, std::int64_t scale);

} // namespace rv::strategy
