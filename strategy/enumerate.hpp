#pragma once
// Enumeration: every (GPU type, partition, topology) that can run the request, with its exact
// resources; every dropped type with its reason. Kinds (direct, backfill, ...) come later.

#include "core/model/cluster.hpp"
#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "strategy/gpu_types.hpp"
#include "strategy/options.hpp"
#include "strategy/profile.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rv::strategy {

// One resource shape: what `sbatch` (and `sbatch --test-only`) will be asked for.
// A shape (model::Shape) worth probing and planning, with its sbatch resources.
struct Candidate : model::Shape {
  std::string id;         // c1, c2, ... in enumeration order (probe ids)
  std::string gres;       // per node, e.g. "gpu:a100:4"
  std::string constraint; // from a profile alias, "" = none
  std::string account;    // request, else profile default, else cluster default; "" = none
  std::string qos;        // "" = none
  std::string exclude;    // --exclude from request.exclude_nodes, comma-joined; "" = none
  int cpus_per_task = 1;  // one task per node
  std::int64_t mem_mb_per_node = 0;
  std::int64_t max_time_s = -1;  // the longest walltime: MaxTime, or the job QOS's MaxWall if shorter; -1 = none
  std::string max_time_qos;      // the QOS whose MaxWall max_time_s is; "" = MaxTime
  std::int64_t probe_full_s = 0; // the longest walltime worth probing: min(request, max_time_s)
  bool mig_like = false;
  bool free = false;                // profile says 0 SU
  std::vector<std::string> reasons; // how it was sized
};

// A type (on a partition) the planner dropped, and why.
struct Rejection {
  std::string gpu_type;
  std::string partition;
  std::string reason;               // one line: the summary
  std::vector<std::string> details; // every shape tried and why it does not fit (for -v and JSON)
};

struct Candidates {
  std::vector<Candidate> list;
  std::vector<Rejection> rejected;
  std::vector<std::string> notes;
};

// Enumerates the candidates for `request`. Fails only on usage errors (unknown --type).
Result<Candidates> enumerate_candidates(const model::Cluster& cluster, const Profile& profile,
                                        const model::JobRequest& request, const PlanOptions& opts);

// The account rv submits under: the request's, else the profile's, else the cluster default.
// Warnings for a --qos or -A none of the user's associations names (discovery lists them), said
// before anything is queued; nothing when discovery found no associations.
std::vector<std::string> association_warnings(const model::Cluster& cluster, const model::JobRequest& request);

std::string effective_account(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request);

} // namespace rv::strategy
