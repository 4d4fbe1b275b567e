#pragma once
// `rv run --after REQ[:ok|any]`: a request that starts only after another one ends
// (docs/taskfile.md, "Pipelines"). On the same cluster Slurm holds the jobs: every strategy is
// submitted with `--dependency` on the other request's jobs and `--kill-on-invalid-dep=yes`, so a
// dependency that can never be met (afterok on a failure) cancels them. While the other request
// still races (no winner yet) the dependency covers each of its live siblings: `afterok:J?afterok:K`
// (any of them ends well: only the winner runs the command; the cancelled losers never satisfy
// it) or `afterany:J:K` (all have ended: the losers when cancelled, the winner when done). On
// another cluster, Slurm cannot see the other request: rv waits for its end and submits then.

#include "app/env.hpp"
#include "app/request/requests.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

enum class AfterKind { ok, any };

// What --after names.
struct AfterSpec {
  std::string request; // a request as every command names one (id, job id, name, id prefix)
  AfterKind kind = AfterKind::ok;
};

// Reads `REQ`, `REQ:ok` or `REQ:any`; anything else is a usage error.
Result<AfterSpec> parse_after(std::string_view text);

// What the dependent request does, decided from the other request's record.
struct AfterDecision {
  enum class Mode {
    now,        // the other request already ended as needed: no dependency
    dependency, // Slurm holds the jobs: `dependency` goes into every strategy
    wait,       // another cluster: wait for the other request's end, then submit
  } mode = Mode::now;
  std::string dependency; // Slurm's --dependency value (Mode::dependency)
  std::string note;       // one line for the user: what the request waits for
  nlohmann::json record;  // the dependent's record's `after` field
};

// Pure: the decision for `spec` given the other request `first` as last refreshed and whether it
// runs on the cluster the dependent request will use (`same_cluster`). An `ok` dependency on a
// request that failed or was cancelled is a usage error; so is one on a request with no job.
Result<AfterDecision> decide_after(const RequestRecord& first, const AfterSpec& spec, bool same_cluster);

// Finds the request `spec` names, refreshes it from its cluster (one squeue) and decides; with
// several hosts (a race across clusters) the dependent request always waits.
Result<AfterDecision> resolve_after(Env& env, const AfterSpec& spec);

// Waits (polling its cluster on Slurm's cadence) until the request `id` has ended; its final
// record. `env` must reach its cluster (Clusters::open of its destination).
Result<RequestRecord> wait_for_end(Env& env, const std::string& id);

// Whether the dependent may start after `first` ended (`ok` needs `done`); the error says why not.
Result<void> may_start_after(const RequestRecord& first, const AfterSpec& spec);

// The active requests of `store` that wait for request `id` (their `after` names it).
std::vector<RequestRecord> dependents_of(const std::vector<RequestRecord>& requests, const std::string& id);

} // namespace rv::app
