#pragma once
// A study across clusters (docs/studies.md, "Across clusters"). The clusters share no file
// system, so no one rename can claim a task on both. rv is the coordinator: it owns which cluster
// a task is offered to, records that in the coordinator's request record before it acts, and
// offers a task on one cluster at a time (`tasks/<t>/offer`, holding the attempt). A worker takes
// an offer by one rename of it; rv takes an offer back by a rename of the same offer: exactly one
// of them wins. Everything here is pure: which offers to make and revoke, how the pool spreads
// over the clusters, and the tasks as the clusters together say.

#include "app/run/plan/study.hpp"
#include "core/process/runner.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::app::study {

// Task `task`'s attempt `attempt`, offered on cluster `cluster` (an index into the clusters).
struct Offer {
  int task = 0;
  int attempt = 0;
  std::size_t cluster = 0;
  bool operator==(const Offer&) const = default;
};

// A cluster's workers as the coordinator last saw them.
struct ClusterWorkers {
  int running = 0; // started and alive
  int busy = 0;    // of those, running a task now
};

struct OfferInput {
  // Tasks no cluster holds (never offered, offered and taken back, or lost with attempts left),
  // in the order they should run: (task, the attempt to offer).
  std::vector<std::pair<int, int>> waiting;
  std::vector<Offer> open;              // offers made and not taken yet
  std::vector<ClusterWorkers> clusters; // one per cluster
  int prefetch = 1;                     // offers beyond the idle workers, on a cluster with workers running
};

struct OfferPlan {
  std::vector<Offer> make;   // new offers
  std::vector<Offer> revoke; // offers to take back (each only if the revocation's rename wins)
};

// Offers follow the workers that run: a cluster with running workers gets one open offer per
// idle worker, one per busy worker (its next task, there when its task ends) and `prefetch`; a cluster with none running (its workers pending, or gone) keeps
// none, so its offers are taken back and go where workers run. New offers take the waiting tasks
// in order, the clusters in turn. With no task left waiting, a cluster whose workers run with no
// offer takes one back from a cluster holding two or more, to be offered to it next.
OfferPlan plan_offers(const OfferInput& in);

// One cluster's part of a study's pool across clusters: its worker strategies, its pool input (its
// limits, its workers alive, the free GPUs its plan saw, the study's tasks and --prefer), and how
// its SU weighs against the other clusters' (the su_weights setting; 1 = the same unit).
struct ClusterPool {
  std::vector<model::Strategy> strategies;
  PoolInput in;
  double su_weight = 1;
};

// New workers across clusters: one model (plan_pool) over every cluster's strategies, their SU
// weighted, so that a worker goes where it shortens the study for the least SU whichever cluster
// that is; each cluster within the ceiling its own limits give it (plan_pool's target there), %K
// and the tasks over all of them. One list of strategy indexes per cluster.
std::vector<std::vector<std::size_t>> plan_pool_across(const std::vector<ClusterPool>& clusters,
                                                       std::int64_t task_time_s);

// A task as the clusters together say: the cluster that holds its latest attempt (nullopt when
// none has one). Attempt numbers are the coordinator's, so the highest is the latest.
struct PlacedTask {
  TaskStatus status;
  std::optional<std::size_t> cluster;
};

// Every task's status across clusters, from each cluster's own statuses (task_statuses on its
// listing; each list in the study's task order).
std::vector<PlacedTask> merge_statuses(const std::vector<std::vector<TaskStatus>>& per_cluster);

// What rv does to a cluster's offers, in one round trip: `offer` makes task `task`'s offer of
// `attempt` unless the task already has one or that attempt is taken (idempotent: rv re-applies
// what its record says after a crash); `revoke` renames the offer away.
// offer / revoke a task's attempt; drain (task and attempt unused): nothing is left to offer on
// the cluster, so a worker that finds no offer ends at once instead of waiting k_offer_wait_s for
// one (`tasks/.drained`; the next offer made there removes it).
enum class OfferOp { offer, revoke, drain };
struct OfferStep {
  OfferOp op = OfferOp::offer;
  int task = 0;
  int attempt = 0;
};
proc::Command offer_ops_command(const std::string& tasks_dir, const std::vector<OfferStep>& steps);

// What each step found, task -> one word: `offered` (made now), `open` (it was there), `taken` (a
// worker has the attempt), `revoked` (rv's rename won: the task is rv's again), `gone` (no offer
// and no attempt: never made, or taken back before), `error`.
std::map<int, std::string> parse_offer_ops(std::string_view out);

} // namespace rv::app::study
