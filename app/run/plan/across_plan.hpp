#pragma once
// Planning one request on several clusters at once (docs/multi-cluster.md): each cluster is
// discovered, probed and planned by its own make_plan, all in parallel (no slower than the
// slowest cluster alone), and the plans merge into one ranking (strategy/across.hpp). A cluster
// that cannot be reached, or refuses the request, is named with its reason; the others go on.

#include "app/env.hpp"
#include "app/run/plan/planning.hpp"
#include "strategy/across.hpp"

#include <map>
#include <string>
#include <vector>

namespace rv::app {

// One reached cluster's plan.
struct ClusterRun {
  std::string host; // as the user named it
  Env* env = nullptr;
  PlanRun run;
};

// A cluster left out, and why.
struct LeftOut {
  std::string host;
  std::string reason;
};

struct AcrossPlan {
  std::vector<ClusterRun> clusters;    // reached, in the order the hosts were named
  std::vector<LeftOut> left_out;       // not reached, or refused the request
  std::vector<strategy::Placed> order; // every strategy, best first (cluster = index into clusters)
  std::string su_note;                 // strategy::su_weight_note, "" = none
  double seconds = 0;                  // wall time of the whole planning
  std::size_t strategies() const { return order.size(); }
};

// Two hosts that reach one cluster (same ClusterName and controller, e.g. an alias and its 40 ms
// twin): the later ones leave `clusters` for the returned list, each with a reason that names the
// first; racing a cluster against itself doubles its jobs (ux-review-3 N9). A cluster without a
// name is never taken for another.
std::vector<LeftOut> drop_same_cluster(std::vector<ClusterRun>& clusters);

// Plans `request` on every host of `hosts` at once; a host in `excluded` plans without those nodes
// (a re-fan-out round: node names are each cluster's own). Fails only when no cluster could plan it
// (the first cluster's error, with every cluster's reason in the message) or on an interrupt.
Result<AcrossPlan> make_plans(Env& env, const std::vector<std::string>& hosts, const model::JobRequest& request,
                              const strategy::PlanOptions& options,
                              const std::map<std::string, std::vector<std::string>>& excluded = {});

// The merged plan: a table with a cluster column, or with --json one document
// (docs/plan-json.md, "Across clusters").
void print_plans(Output& output, const AcrossPlan& plans, bool json, bool verbose);

// --dry-run across clusters: print; exit 0, or 4 when no cluster has a viable strategy.
Result<int> dry_run_across(Env& env, const AcrossPlan& plans);

} // namespace rv::app
