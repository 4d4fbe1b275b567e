#pragma once
// Which node of which running job a request names: what `rv ssh` and `rv forward` act on. One
// poll of the request's jobs (squeue, then scontrol and sacct), then the node's address.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "slurm/race.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rv::app {

// A node of a running job.
struct NodeTarget {
  std::string request_id;
  std::string job_id;
  std::string job_name;
  std::vector<std::string> nodes; // every node of the allocation, in Slurm's order
  int node_index = 0;             // which of them (--node K)
  std::string node;               // its Slurm name
  std::string address;            // how the login node reaches it (NodeAddr; the name when unknown)
  std::string workdir;            // where the job's command runs (the request's snapshot dir); "" = the
                                  // job's default, the login node's home directory
};

// The running job of request `key` (id prefix, job id or job name; "" = the newest request that
// has a running job) and its node `node_index`. The request's winner is preferred; a request
// whose jobs are all pending or ended is an error saying so, with what to do.
Result<NodeTarget> running_target(Env& env, const std::string& key, int node_index);

// Picks, among `candidates` (newest first) and what one poll saw of their jobs, the first
// running job (the winner when it runs). Pure; the index into candidates and the job id, or
// an error naming what was found instead.
struct RunningPick {
  std::size_t request = 0;
  std::string job_id;
};
Result<RunningPick> pick_running(const std::vector<RequestRecord>& candidates,
                                 const std::map<std::string, slurm::JobView>& views, bool named);

// NodeAddr of the node `scontrol -o show node NODE` printed in `text` ("" when absent).
std::string node_address(std::string_view text);

// The job's state now (one squeue, scontrol/sacct once it left squeue).
Result<slurm::JobView> job_now(Env& env, const NodeTarget& target);

} // namespace rv::app
