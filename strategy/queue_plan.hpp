#pragma once
// Joins the two views of a backfill window: the probes' (`sbatch --test-only`) and the queue
// model's (strategy/window_model.hpp). Where they disagree both sets of strategies are kept and
// the race decides; where GPUs are idle now, the plan keeps one strategy that starts on them.

#include "core/model/plan.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/window_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rv::strategy {

struct Plan;

// The longest walltime that ends before the queue window closes: until_s less `margin_s` (the
// scheduler's bf_resolution plus submission latency), in whole minutes; the candidate's full
// walltime when nothing closes it; 0 when nothing is idle or it is under a minute.
std::int64_t queue_walltime(const QueueWindow& qw, const Candidate& c, std::int64_t margin_s);

// The strategies of `c`: those of the probe window (strategies_for), plus the ones the queue window
// starts now (window_source "queue"); the same submission from both becomes one ("probe+queue"
// when they agree on its wait; the queue's wait and both views in its reasons when not). Sets
// qw.walltime_s and qw.disagreement.
std::vector<model::Strategy> strategies_with_queue(const Candidate& c, const Window* probe, QueueWindow& qw,
                                                   const model::JobRequest& request, const PlanOptions& opts,
                                                   std::int64_t margin_s);

// After ranking: where a queue window has GPUs idle now and no kept strategy starts on them, one
// that does replaces the last kept (when only the fan-out width dropped it); a note per idle
// window says which strategy uses it, or why none does.
void cover_idle_gpus(Plan& plan, const model::JobRequest& request);

// The queue windows as lines for the plan table: one per shape; with `verbose` also why, and
// where the probes said otherwise.
std::vector<std::string> describe_queue_windows(const Plan& plan, bool verbose);

} // namespace rv::strategy
