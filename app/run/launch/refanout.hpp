#pragma once
// Re-fan-out around bad nodes (docs/preflight.md): when the winner of `rv run -f` fails the in-job
// preflight (exit 96 and the preflight's verdict file, which only the preflight writes) or dies early of a known GPU fault, rv
// plans the request again without the node and races again, at most `refanout_max` times. The
// decision is pure; each round is a new request record that carries the history.

#include "app/request/requests.hpp"
#include "core/process/runner.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rv::app {

// A job that dies of a GPU-fault signature this soon after starting is re-fanned out.
inline constexpr std::int64_t k_hardware_retry_window_s = 300;

// How the winner of one round ended, as rv saw it.
struct EndedWinner {
  slurm::JobState state = slurm::JobState::unknown; // failed, completed, ...
  int exit_status = 0;                              // the job's exit code
  std::int64_t run_time_s = -1;                     // -1 = unknown
  std::string node_list;                            // where it ran (Slurm hostlist)
  std::string log_tail;                             // the tail of its stderr logs ("" when unread)
  std::string preflight;                            // the preflight's verdict file (the FAIL line), "" when absent
};

// One node that failed a request, and what rv did about it.
struct RefanoutStep {
  std::string request_id; // the round's request
  std::string job_id;     // its winner
  std::string node;       // the node(s) excluded from then on (comma list)
  std::string kind;       // "preflight" or "gpu_fault"
  std::string reason;     // the preflight's reason or the fault signature
};

struct RefanoutDecision {
  bool retry = false;
  std::vector<std::string> exclude; // nodes to add to the exclude list
  RefanoutStep step;                // node, kind and reason (request and job left to the caller)
  std::string why_not;              // a node failure that is not retried: why ("" otherwise)
};

// Whether to race again without the failed node(s): a preflight failure (exit 96 and a verdict
// file: exit 96 alone is a command that ran and exited 96, never rerun), or a FAILED
// job within k_hardware_retry_window_s of its start with a GPU-fault signature in its log; not
// after `rounds_done` >= `max_rounds`, nor when the node is already excluded.
RefanoutDecision decide_refanout(const EndedWinner& winner, const std::vector<std::string>& excluded, int rounds_done,
                                 int max_rounds);

// The record's `refanout` field: the steps so far, every node excluded, and the request of the
// next round ("" for the round that ran on).
nlohmann::json refanout_json(const std::vector<RefanoutStep>& history, const std::vector<std::string>& excluded,
                             const std::string& next_request);

// One line per step for `rv ps`: "a100-1 failed preflight (nvidia-smi: No devices were found) in
// request 3f9c02ab, job 212"; plus "re-fanned out as request X" on a round that was retried.
std::vector<std::string> refanout_lines(const nlohmann::json& refanout);

// The history refanout_json wrote (empty for null or a record without one).
std::vector<RefanoutStep> refanout_history(const nlohmann::json& refanout);

// The tail of the winner's stderr logs (per-node logs too), or "" when they cannot be read.
std::string winner_log_tail(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job);

// The winner's preflight verdict file (templates::preflight_verdict_path), or "" when there is none
// or it cannot be read.
std::string winner_preflight_verdict(proc::Runner& runner, const RequestRecord& rec, const JobRecord& job);

} // namespace rv::app
