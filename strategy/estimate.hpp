#pragma once
// Kinds and waits: turns one candidate plus its probe window into strategies (direct, backfill,
// time-min, checkpoint), each with a wait estimate taken from the probes, never invented.

#include "core/model/plan.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/options.hpp"
#include "strategy/probe_plan.hpp"

#include <optional>
#include <vector>

namespace rv::strategy {

// The wait for walltime `walltime_s` from `window`: the start estimate of a probe at exactly
// that walltime, else the "now" estimate when walltime_s <= the window, else nullopt (unknown).
std::optional<std::int64_t> estimate_wait(const Window* window, std::int64_t walltime_s);

// The strategies for one candidate (resources and reasons filled; SU, id and label not yet).
//   direct      walltime = request, when it fits MaxTime and does not fit the window
//   backfill    walltime = request, when it fits the measured window
//   time-min    --time = request, --time-min = window (only with request.allow_time_min)
//   checkpoint  segments of min(window, MaxTime), when the request is longer than the window or
//               MaxTime (only with request.allow_checkpoint); first-segment wait
std::vector<model::Strategy> strategies_for(const Candidate& c, const Window* window, const model::JobRequest& request,
                                            const PlanOptions& opts);

} // namespace rv::strategy
