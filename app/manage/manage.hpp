#pragma once
// The stored requests after submission: stop them, read or follow their logs (listing them,
// refreshed from Slurm with the losers a killed rv left behind reaped, is app/request/lookup).
// `rv ps`, `rv stop` and `rv logs` are these calls plus their flags and a table (cli/cmd_ps.cpp).

#include "app/env.hpp"
#include "app/request/requests.hpp"

#include <string>
#include <vector>

namespace rv::app {

// The request `key` names (id prefix, job id or job name), or the active ones (`all`).
Result<std::vector<RequestRecord>> stop_targets(Env& env, const std::string& key, bool all);

// What stopping one request did.
struct StopOutcome {
  std::string id;
  std::vector<std::string> cancelled; // job ids cancelled now
  std::string ended;                  // when nothing was live: how it had ended (TIMEOUT, done, ...)
  std::string because;                // a dependent stopped with the request it waited for (rv run --after)
};

// Cancels the live jobs of `targets` (by id and the request's job name: an id Slurm has reused for
// another job is left alone), deletes their secrets files, records them cancelled. A request whose
// jobs have all ended keeps its state (a TIMEOUT stays a TIMEOUT): its outcome says how it ended.
// The requests that wait for a stopped one's success (rv run --after REQ:ok, app/run/after.hpp) can
// never start: they are stopped too, their outcomes saying why (`because`).
Result<std::vector<StopOutcome>> stop_requests(Env& env, std::vector<RequestRecord>& targets);

struct LogsRequest {
  std::string key;     // request id, job id or job name; "" = the latest request
  bool follow = false; // stream until the job ends; wait for a sibling to start first
  bool err = false;    // the .err log
  int node = -1;       // per-node log of node K (multi-node)
  int tail = -1;       // only the last N lines
};

// Prints the winner's log (or follows it, returning the job's exit code); a request whose
// siblings are all still pending is refreshed (and reaped) until one starts, with `follow`.
Result<int> show_logs(Env& env, const LogsRequest& req);

} // namespace rv::app
