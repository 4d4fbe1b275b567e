#pragma once
// Joins the two views of a backfill window: the probes' (`sbatch --test-only`) and the queue
// model's (strategy/window_model.hpp). Where they disagree both sets of strategies are kept and
// the race decides; where GPUs are idle now, the plan keeps one strategy that starts on them.

#include "core/model/plan.hpp"
#include "strategy/backfill_rule.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/window_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rv::strategy {

struct Plan;

// The longest walltime backfill starts in the queue window (strategy/backfill_rule.hpp: it ends
// strictly before the closing job's planned start rounded down to bf_resolution's grid, started by
// the pass after rv's submission), in whole minutes, at most the candidate's full walltime; the
// full walltime when nothing closes it; 0 when nothing is idle or not even a minute fits.
std::int64_t queue_walltime(const QueueWindow& qw, const Candidate& c, const BackfillTiming& timing);

// The strategies of `c`: those of the probe window (strategies_for), plus the ones the queue window
// starts now (window_source "queue"); the same submission from both becomes one ("probe+queue"
// when they agree on its wait; the queue's wait and both views in its reasons when not). Sets
// qw.walltime_s and qw.disagreement.
std::vector<model::Strategy> strategies_with_queue(const Candidate& c, const Window* probe, QueueWindow& qw,
                                                   const model::JobRequest& request, const PlanOptions& opts,
                                                   const BackfillTiming& timing);

// After ranking: where a queue window has GPUs idle now and no kept strategy starts on them, one
// that does replaces the last kept (when only the fan-out width dropped it); a note per idle
// window says which strategy uses it, or why none does.
void cover_idle_gpus(Plan& plan, const model::JobRequest& request);

// The queue windows as lines for the plan table: one per shape; with `verbose` also why, and
// where the probes said otherwise.
std::vector<std::string> describe_queue_windows(const Plan& plan, bool verbose);

} // namespace rv::strategy
