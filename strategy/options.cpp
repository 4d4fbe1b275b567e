#include "strategy/options.hpp"

#include <algorithm>

namespace rv::strategy {

PlanOptions compress_time(PlanOptions o, std::int64_t scale)
{
  if (scale <= 1) {
    return o;
  }
  auto div = [scale](std::int64_t s, std::int64_t floor_s) { return std::max(floor_s, s / scale); };
  o.now_threshold_s = div(o.now_threshold_s, 1);
  o.refine_resolution_s = div(o.refine_resolution_s, 60);
  o.min_segment_s = div(o.min_segment_s, 120);
  o.checkpoint_margin_s = div(o.checkpoint_margin_s, 90);
  std::vector<std::int64_t> grid;
  for (auto g : o.probe_grid) {
    auto m = (div(g, 60) + 59) / 60 * 60; // whole minutes: sbatch --time has no seconds
    if (grid.empty() || grid.back() != m) {
      grid.push_back(m);
    }
  }
  o.probe_grid = std::move(grid);
  return o;
}

} // namespace rv::strategy
