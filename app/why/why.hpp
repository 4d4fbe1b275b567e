#pragma once
// `rv why [REQUEST]`: why a request has not started, when it may, what is ahead of it, and which
// changes to the request would start sooner. One round trip reads everything Slurm knows about
// the request and its queue (with the cluster discovery), a second probes the alternatives'
// backfill windows; the rest is pure (app/why/why_queue.cpp, app/why/why_alternatives.cpp,
// app/why/why_render.cpp). It reads and explains; it never cancels, submits or rewrites a record.
// JSON shape: docs/why.md.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "core/model/plan.hpp"
#include "slurm/pending_reason.hpp"
#include "slurm/squeue.hpp"
#include "strategy/options.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// One job of the queue in front of a pending job.
struct AheadJob {
  std::string job_id;
  std::string user;
  std::string name;
  int gpus = 0;
  std::int64_t priority = -1;
  std::string start_estimate; // pending: Slurm's expected start; running: its end ("" unknown)
  std::string reason;
};

// What is ahead of one pending job: the pending jobs of its partition with a higher priority
// that need the same GPU type, and the running jobs whose end frees GPUs of that type.
struct Ahead {
  std::string partition;
  std::string gpu_type; // "" = untyped GPUs
  int gpus = 0;         // what the job itself needs
  int pending_jobs = 0;
  int pending_gpus = 0;
  std::vector<AheadJob> pending; // highest priority first, at most 5
  int running_jobs = 0;
  int running_gpus = 0;
  std::optional<AheadJob> first_end; // the running job that ends first (start_estimate = its end)
};

// One sibling, as Slurm sees it now.
struct WhyJob {
  std::string strategy_id;
  std::string label;
  std::string job_id;
  slurm::JobState state = slurm::JobState::unknown; // live Slurm state; unknown when Slurm does not know it
  std::string raw_reason;                           // as Slurm printed it
  slurm::ReasonInfo reason;
  std::string start_estimate;             // cluster-local, "" unknown
  std::optional<std::int64_t> start_in_s; // from the cluster's clock
  std::string nodes;                      // running: allocated; pending: where backfill plans it
  std::int64_t priority = -1;
  std::string dependency;
  double est_su = 0; // from the request's plan
  std::optional<Ahead> ahead;
};

// A changed request that would start sooner than the request as it is.
struct Alternative {
  std::string change;             // "another GPU type", "fewer GPUs", "a shorter --time", ...
  std::vector<std::string> flags; // the rv run flags that ask for it: {"-t", "h200"}
  model::Strategy strategy;       // the re-planned strategy: label, kind, est_wait_s, est_su
};

// The whole answer.
struct WhyReport {
  std::int64_t now_threshold_s = 300; // a start this close is said "now" (the plan's now_threshold_s)
  std::string request_id;
  std::string name;
  std::string host;
  std::string status;  // pending, running, ended, submitting
  std::string summary; // one line
  std::vector<WhyJob> jobs;
  std::optional<std::int64_t> best_start_in_s; // the earliest sibling's estimate
  std::string best_start;
  std::vector<Alternative> alternatives;
  bool replanned = false;
  std::vector<std::string> notes;
  int round_trips = 0;
  double seconds = 0;
};

struct WhyOptions {
  std::string key;    // request id (prefix), job id or name; "" = the latest pending request
  bool replan = true; // look for alternatives (one more round trip: the probes)
  int max_alternatives = 6;
  strategy::PlanOptions plan_options; // the planner's knobs (config max_strategies, time_scale)
};

// Explains the request `opts.key` names (or the latest pending one).
Result<WhyReport> explain_request(Env& env, const WhyOptions& opts);

// --- pure parts ---------------------------------------------------------------------------

// The squeue format rv why reads: `%i|%T|%r|%P|%u|%Q|%D|%S|%e|%l|%M|%b|%N|%Y|%j`.
inline constexpr std::string_view why_queue_format = "%i|%T|%r|%P|%u|%Q|%D|%S|%e|%l|%M|%b|%N|%Y|%j";

// What is ahead of `mine` (pending) in `queue` (pending and running jobs of any user):
// pending jobs sharing a partition with it, of a higher priority (or the same and submitted
// earlier: a lower job id), eligible to start (not held, not waiting on a dependency or a begin
// time, not hopeless), needing its GPU type (or untyped GPUs); running jobs on
// `partition_nodes` (its partition's nodes; empty = by partition name) holding GPUs of that type.
Ahead whats_ahead(const slurm::SqueueJob& mine, const std::vector<slurm::SqueueJob>& queue,
                  const std::vector<std::string>& partition_nodes);

// The requests worth re-planning to find something sooner: the request itself, any GPU type
// (when it named one), half the GPUs (when it asked for 2 or more). Each with its change's name
// and flags.
struct Variant {
  std::string change;
  std::vector<std::string> flags;
  model::JobRequest request;
  std::vector<model::StrategyKind> only_kinds; // keep only these kinds of its plan; empty = all
};
std::vector<Variant> probe_variants(const model::JobRequest& request);

// The variants that need no probe of their own (their shapes were probed for the request): a
// shorter --time equal to a measured window (`window_s`, longest first), --checkpoint segments
// (when the request did not allow them), --time-min (likewise).
std::vector<Variant> derived_variants(const model::JobRequest& request, const std::vector<std::int64_t>& window_s);

// Re-planned strategies of each variant, as (variant, its plan's strategies).
struct VariantPlan {
  Variant variant;
  std::vector<model::Strategy> strategies;
};

// How much sooner an alternative must start to be worth a change of the request: half the
// request's own wait, at least a minute and at most `max_margin_s` (the planner's "now"); without
// an estimate, `max_margin_s`. A 5-minute wait must not hide a type that starts now (UX review 3,
// N5), nor a 1-hour wait offer one that starts 2 minutes sooner.
std::int64_t alternative_margin_s(std::optional<std::int64_t> current_wait_s, std::int64_t max_margin_s);

// The alternatives that start sooner than `current_wait_s` (the request's best estimate; nullopt =
// unknown, when only a start within `now_s` counts), by at least `margin_s`: strategies with a
// known wait, not already one of the request's siblings (`sibling_labels`), each label once,
// soonest first, then cheapest; at most `limit`.
std::vector<Alternative> pick_alternatives(const std::vector<VariantPlan>& plans,
                                           const std::vector<std::string>& sibling_labels,
                                           std::optional<std::int64_t> current_wait_s, std::int64_t now_s,
                                           std::int64_t margin_s, int limit);

// The request a record was submitted with: its stored `options`, or (older records) what the
// plan's strategies say (GPU count, total time, account, QOS; any type).
Result<model::JobRequest> recorded_request(const RequestRecord& rec);

// The report as `rv why --json` prints it (docs/why.md), and as text.
nlohmann::json to_json(const WhyReport& report);
std::string render_why(const WhyReport& report);

} // namespace rv::app
