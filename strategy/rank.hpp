#pragma once
// Ranking: by estimated wait (known before unknown), then SU; dominance pruning within a
// (GPU type, topology, checkpoint-or-not) group; a capped fan-out width.

#include "core/model/cluster.hpp"
#include "core/model/plan.hpp"
#include "strategy/options.hpp"

#include <string>
#include <vector>

namespace rv::strategy {

// A strategy the ranking dropped, and why.
struct Pruned {
  model::Strategy strategy;
  std::string reason;
};

struct Ranked {
  std::vector<model::Strategy> kept; // rank order, ids s1.. and labels set
  std::vector<Pruned> pruned;        // dominated or beyond the width
};

// The fan-out width: opts.max_width lowered by MaxSubmitJobs and bf_max_job_user; each
// lowering is explained in `notes`.
int fanout_width(const model::Cluster& cluster, const PlanOptions& opts, std::vector<std::string>& notes);

// True when a should run before b: known wait first, shorter wait in steps of `resolution_s`
// (waits within one step are equal: the scheduler cannot tell them apart), lower SU, then stable
// keys. Never the order the probes ran in.
bool ranks_before(const model::Strategy& a, const model::Strategy& b, std::int64_t resolution_s = 1);

// Sorts, prunes dominated strategies (another in the same group waits no longer and costs no
// more; unknown waits count as longest; one whose wait comes from the probes alone never prunes
// one from the queue model alone, nor the reverse: the race decides), caps at `width`, and
// assigns ids and labels.
Ranked rank_strategies(std::vector<model::Strategy> strategies, int width, std::int64_t resolution_s = 1);

// A one-line label: "2x4 a100 backfill 4h", "1x 1g.10gb checkpoint 3x2h".
std::string make_label(const model::Strategy& s);

} // namespace rv::strategy
