#pragma once
// One ranking across several clusters' plans (docs/multi-cluster.md): estimated wait first, each
// cluster's estimate taken against its own clock, then SU times the cluster's weight (a cluster
// whose units are cheaper or dearer counts as such), then the cluster named first, then each
// plan's own rank. Pure: the plans come in, the merged order comes out.

#include "strategy/plan.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace rv::strategy {

// One cluster's plan, as the merged ranking reads it.
struct ClusterPlanView {
  std::string host;        // the login node as the user named it
  const Plan* plan;        // its plan (strategies in its own rank order)
  double su_weight = 1;    // its SU's weight against the other clusters' units
  bool weight_set = false; // the config names a weight for it
};

// A strategy's place in the merged ranking.
struct Placed {
  std::size_t cluster = 0;  // index into the views
  std::size_t strategy = 0; // index into that cluster's plan.strategies
  double weighted_su = 0;   // est_su x su_weight
};

// Every strategy of every view, best first. Waits within the coarser of the clusters' ranking
// resolutions count as equal (as within one plan); an unknown wait ranks after every known one.
std::vector<Placed> rank_across(const std::vector<ClusterPlanView>& views);

// What the plan says about the clusters' SU units: "" when every cluster has a configured weight
// or there is one cluster; else a note naming the default weight of 1 and how to set them.
std::string su_weight_note(const std::vector<ClusterPlanView>& views);

} // namespace rv::strategy
