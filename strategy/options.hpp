#pragma once
// Knobs of the planner, with the defaults rv ships. Documented in docs/plan-json.md.

#include <cstdint>
#include <vector>

namespace rv::strategy {

struct PlanOptions {
  int max_width = 8;                       // most strategies submitted; lowered by site limits
  int max_topologies = 3;                  // per (type, partition): the k-node splits with fewest nodes
  std::int64_t now_threshold_s = 300;      // a probe "starts now" when start - now <= this
  std::int64_t refine_resolution_s = 600;  // the probe script refines the window to this
  std::int64_t min_segment_s = 1800;       // shortest checkpoint segment worth running
  std::int64_t checkpoint_margin_s = 600;  // per segment: signal lead + save/restore overhead
  int mig_cpus = 2;                        // CPUs for a MIG-like slice (or its node share if smaller)
  std::int64_t mig_mem_mb = 16384;         // memory for a MIG-like slice (or its node share if smaller)
  // Coarse walltimes probed, capped by MaxTime and by the request (which is always probed).
  std::vector<std::int64_t> probe_grid = {1800, 3600, 7200, 14400, 28800, 57600, 86400, 172800};
};

} // namespace rv::strategy
