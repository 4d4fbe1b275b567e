#pragma once
// The planner: cluster + profile + request + probe windows -> ranked strategies, with the reasons
// for every decision as data. Pure: no I/O, no clock, no logging. JSON shape: docs/plan-json.md.

#include "core/model/cluster.hpp"
#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/profile.hpp"
#include "strategy/rank.hpp"
#include "strategy/window_model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace rv::strategy {

struct Plan {
  std::vector<model::Strategy> strategies; // ranked, ids s1.., at most the fan-out width
  std::vector<Window> windows;             // the probe windows of the shapes considered
  std::vector<QueueWindow> queue_windows;  // the queue model's windows of the same shapes
  std::vector<Rejection> rejected;         // types (per partition) dropped, with reasons
  std::vector<Pruned> pruned;              // strategies dropped by dominance or width
  std::vector<std::string> notes;          // type resolution, width caps, ...
  int width = 0;                           // the fan-out width applied
  std::int64_t rank_resolution_s = 1;      // waits within one of these are equal in the ranking
  // Set when no strategy exists because the requested time exceeds every partition's MaxTime (or
  // the job QOS's MaxWall, where shorter) and checkpointing is off: the longest walltime allowed,
  // which no_viable_strategy names beside --checkpoint; longest_qos names the QOS when it decided.
  std::int64_t longest_max_time_s = 0;
  std::string longest_qos;
};

// Plans `request`. `probes` may be empty (no probing): waits are then unknown (null). With a known
// queue (probes.queue) each shape also gets the queue model's window (strategy/queue_plan.hpp).
// Waits rank in steps of the scheduler's resolution (max of bf_resolution, bf_interval): within
// one step SU decides. Fails only on usage errors (unknown --type, GPU count < 1).
Result<Plan> plan(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request,
                  const Windows& probes, const PlanOptions& opts = {});
// The same from `candidates` enumerated already (enumerate_candidates of this cluster, profile,
// request and options): discovery enumerates them once for its probes and hands them on, so one
// plan enumerates once (architecture-review-3: three times per plan before).
Result<Plan> plan(const model::Cluster& cluster, const Profile& profile, Candidates candidates,
                  const model::JobRequest& request, const Windows& probes, const PlanOptions& opts = {});

// The plan as JSON: {"strategies": [...], "windows": [...], "rejected": [...], "pruned": [...],
// "notes": [...], "width": N}.
nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const model::Strategy& s);
nlohmann::json to_json(const Window& w);
nlohmann::json to_json(const QueueWindow& w);

// The error for a plan with no strategy (ErrorCode::no_strategy, exit 4): one short reason per
// dropped type, and where to read more. The same for a dry run and a real one.
Error no_viable_strategy(const Plan& plan);

// The hint for a plan without strategies, from the causes of its rejections (a bad node name
// is not helped by fewer GPUs).
std::string no_fit_hint(const Plan& plan);

} // namespace rv::strategy
