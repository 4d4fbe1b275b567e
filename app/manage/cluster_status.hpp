#pragma once
// `rv status`: what the user can run now and what they have, on one screen. The Slurm part is
// one round trip (status_commands, run as one batch): discovery's probes (GPUs per node, the
// partitions), the user's jobs (squeue), fair-share (sshare), the association limits with their
// usage (scontrol show assoc_mgr), the last 30 days of jobs (sacct) and the site's quota command.
// parse_status turns the outcomes into a ClusterStatus; status_lines draws it. Both pure.

#include "app/env.hpp"
#include "app/request/requests.hpp"
#include "slurm/assoc_mgr.hpp"
#include "slurm/sshare.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// GPUs of one type in one partition ("" partition: every partition, each node counted once).
struct GpuAvailability {
  std::string partition;
  std::string type;
  int idle = 0;        // free GPUs on nodes that take jobs
  int total = 0;       // every GPU, unavailable ones included
  int unavailable = 0; // GPUs on drained, draining, down or otherwise unusable nodes
  int nodes = 0;
  int unavailable_nodes = 0;
};

// A job of one of the user's active requests, as squeue shows it now: its record with the state,
// reason, estimated start and nodes squeue printed (app/run/show/status_view.hpp's job_state_text reads it).
struct ActiveJob {
  std::string request;
  JobRecord job;
};

// A group limit of an association that applies to the user, and its usage.
struct LimitUsage {
  std::string account;
  std::string user; // "" = the account's own association (shared by its users)
  std::string partition;
  slurm::AssocLimit limit;
};

struct ClusterStatus {
  std::string host;
  std::string user;
  std::string cluster;                // ClusterName, from discovery's `scontrol show config`
  std::string slurm_version;          // its SLURM_VERSION (same probe: no extra round trip); "" = unknown
  model::ContainerSupport containers; // the container runtimes (discovery's probe, same round trip)
  std::vector<GpuAvailability> by_partition;
  std::vector<GpuAvailability> by_type;
  std::vector<ActiveJob> jobs;
  std::vector<slurm::SshareRow> fairshare; // the user's rows
  std::vector<LimitUsage> limits;
  double su_30d = 0; // SU spent by the user's jobs that ended or ran in the last 30 days
  int jobs_30d = 0;
  double su_per_billing_hour = 1;
  std::optional<std::string> quota;  // the quota command's output; nullopt = the site names none
  std::vector<std::string> warnings; // probes that failed (shown, not fatal)
};

// The batch: discovery's commands for `user`, then squeue (the user's jobs), sshare, assoc_mgr,
// sacct (30 days) and, when the profile names one, the quota command (run by `sh -c`).
std::vector<proc::Command> status_commands(const std::string& user, const std::string& quota_command);

// Builds the status from the outcomes of status_commands (same order), the local request
// records (only active ones are shown) and the site's SU rate.
Result<ClusterStatus> parse_status(const std::vector<proc::Outcome>& outcomes,
                                   const std::vector<RequestRecord>& requests, bool with_quota,
                                   double su_per_billing_hour);

// Runs the batch (one round trip) and parses it; the profile gives the quota command and the SU rate.
Result<ClusterStatus> cluster_status(Env& env);

nlohmann::json to_json(const ClusterStatus& s);

// The screen, one string per line.
std::vector<std::string> status_lines(const ClusterStatus& s);

} // namespace rv::app
