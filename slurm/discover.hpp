#pragma once
// Cluster discovery: every probe in one round trip, then pure parsing into model::Cluster.

#include "core/model/cluster.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rv::slurm {

// What to discover.
struct DiscoveryQuery {
  std::string user;                    // for sacctmgr limits; "" skips them
  std::vector<std::string> partitions; // restrict sinfo; empty = all
  bool job_ends = false;               // with a user: how early jobs end too (a plan's expected waits)
};

// What a plan discovers (rv run, rv up, the association refresh that keeps the same facts): every
// partition, `user`'s association facts, and how early jobs end (strategy/early_end.hpp).
inline DiscoveryQuery plan_discovery_query(std::string user)
{
  return {std::move(user), {}, true};
}

// The probes, in the order parse_discovery expects: sinfo, scontrol show partition/node/config,
// `date '+%z %Z'`, `readlink /etc/localtime`, the container runtime probe (slurm/containers.hpp), then (with a user) sacctmgr assoc, qos, user, and
// with `job_ends` how early the last day's jobs ended (slurm/job_ends.hpp: sacct, accounting as
// sacctmgr is).
std::vector<proc::Command> discovery_commands(const DiscoveryQuery& query);

// Builds the cluster from the outcomes of discovery_commands (same order). Nodes come from
// scontrol (sinfo fills in GresUsed and stands in when scontrol failed); failed optional
// probes (config, timezone, sacctmgr, sacct) leave defaults and a warning in `Cluster::warnings`.
Result<model::Cluster> parse_discovery(const std::vector<proc::Outcome>& outcomes);

// Runs discovery_commands with one runner.run_batch call, then parse_discovery.
Result<model::Cluster> discover(proc::Runner& runner, const DiscoveryQuery& query);

} // namespace rv::slurm
