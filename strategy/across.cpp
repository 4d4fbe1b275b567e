#include "strategy/across.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace rv::strategy {

std::vector<Placed> rank_across(const std::vector<ClusterPlanView>& views)
{
  std::int64_t resolution = 1;
  for (const auto& v : views) {
    resolution = std::max(resolution, v.plan->rank_resolution_s);
  }
  std::vector<Placed> placed;
  for (std::size_t c = 0; c < views.size(); ++c) {
    const auto& strategies = views[c].plan->strategies;
    for (std::size_t i = 0; i < strategies.size(); ++i) {
      placed.push_back({c, i, strategies[i].est_su * views[c].su_weight});
    }
  }
  auto bucket = [&](const Placed& p) {
    const auto& w = views[p.cluster].plan->strategies[p.strategy].est_wait_s;
    return w ? std::max<std::int64_t>(0, *w) / resolution : std::numeric_limits<std::int64_t>::max();
  };
  std::stable_sort(placed.begin(), placed.end(), [&](const Placed& a, const Placed& b) {
    const auto ba = bucket(a), bb = bucket(b);
    if (ba != bb) {
      return ba < bb;
    }
    if (a.weighted_su != b.weighted_su) {
      return a.weighted_su < b.weighted_su;
    }
    if (a.cluster != b.cluster) {
      return a.cluster < b.cluster;
    }
    return a.strategy < b.strategy;
  });
  return placed;
}

std::string su_weight_note(const std::vector<ClusterPlanView>& views)
{
  if (views.size() < 2) {
    return {};
  }
  std::string unset;
  for (const auto& v : views) {
    if (!v.weight_set) {
      unset += (unset.empty() ? "" : ", ") + v.host;
    }
  }
  if (unset.empty()) {
    return {};
  }
  return fmt::format("SU are compared across clusters with weight 1 for {} (their units may differ): set "
                     "su_weights, e.g. rv config set su_weights {}=1",
                     unset, views.front().host);
}

} // namespace rv::strategy
