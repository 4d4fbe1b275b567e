#pragma once
// Discovery and the backfill probes in as few round trips as rv's per-host cache allows
// (docs/discovery-cache.md). Cold: one round trip for every discovery command at once, one for
// the probes. Warm (the static facts cached and fresh): ONE round trip that reads the dynamic
// facts, checks that the static ones still hold, and already runs the probes of the candidates
// the cached cluster yields; a probe the fresh cluster needs and that was not run costs a second
// round trip, a failed check re-reads the static facts (also a second). Expired: ONE round trip
// too, that reads every fact again and probes the candidates of the cluster as last seen.

#include "app/env.hpp"
#include "app/request/remote_roots.hpp"
#include "core/model/cluster.hpp"
#include "core/model/queue.hpp"
#include "slurm/probe.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/probe_plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// Where the time before the plan went, in seconds, for `-v` and --json.
struct DiscoveryTimes {
  double connect_s = 0;   // the SSH connection (0 when already open, or local)
  double discovery_s = 0; // the discovery round trip; warm: discovery and probes together
  double probes_s = 0;    // the probe round trip(s) after discovery; warm: only the extra ones
};

struct Discovered {
  model::Cluster cluster;
  strategy::Windows windows;  // of the candidates the fresh cluster yields, with the queue below
  model::QueueSnapshot queue; // the scheduler's queue, read in the discovery round trip (window model)
  int probes = 0;             // sbatch --test-only calls the login node ran
  std::string cache;          // off, cold, warm, or "stale: <why>" (re-read in a second round trip)
  DiscoveryTimes times;
  std::optional<RemoteRoots> roots;  // rv's directories there, resolved in the same round trip (none: failed)
  strategy::Candidates candidates;   // enumerated once for the probes; strategy::plan takes them
  std::vector<proc::Outcome> riders; // the answers of the caller's commands that rode in the batch
};

// The probe job of candidate `c`: its coarse grid and its exact resources.
slurm::ProbeJob probe_job(const strategy::Candidate& c, const strategy::PlanOptions& options);

// The probe script as one command (`sh -s`, concurrent in a batch).
proc::Command probe_command(const std::vector<slurm::ProbeJob>& jobs, const strategy::PlanOptions& options,
                            int concurrency);

// Reads the probe command's outcome: an error when it failed without output.
Result<slurm::ProbeOutput> read_probes(const proc::Outcome& outcome, const std::string& where);

// The windows of `candidates` from the answers of `jobs` (run for these or other candidates:
// an answer belongs to the candidate whose probe job is the same).
strategy::Windows windows_of(const slurm::ProbeOutput& answers, const std::vector<slurm::ProbeJob>& jobs,
                             const std::vector<strategy::Candidate>& candidates, const strategy::PlanOptions& options);

// Discovers the cluster and probes every candidate of `request`, using and refreshing the
// discovery cache in env.cache (none, or settings.discovery_cache_s == 0: always cold).
// `riders`: the caller's own reads (concurrent), run in the batch that reads the fresh facts, so
// that they cost no round trip of their own (`rv run`'s push listing); their answers, in order,
// in Discovered::riders.
Result<Discovered> discover_and_probe(Env& env, const strategy::Profile& profile, const model::JobRequest& request,
                                      const strategy::PlanOptions& options,
                                      const std::vector<proc::Command>& riders = {});

} // namespace rv::app
