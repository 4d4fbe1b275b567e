#pragma once
// discover -> probe -> plan against a live cluster: two round trips after connecting, one when
// the discovery cache is warm (app/run/plan/discovery.hpp).

#include "app/env.hpp"
#include "app/run/plan/discovery.hpp"
#include "core/model/cluster.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/plan.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/profile.hpp"
#include "templates/container.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rv::app {

struct PlanRun {
  model::JobRequest request;
  strategy::PlanOptions options;
  model::Cluster cluster;
  strategy::Profile profile;
  strategy::Plan plan;
  int round_trips = 0; // after connecting: discovery + probes
  double seconds = 0;  // wall time of the whole pipeline
  int probes = 0;      // sbatch --test-only calls the login node ran
  std::string cache;   // the discovery cache: off, cold, warm, or "stale: <why>"
  DiscoveryTimes times;
  double plan_s = 0;                // the pure planner
  std::optional<RemoteRoots> roots; // from discovery: submission is then one round trip (app/run/launch/submit.hpp)
  // --container: the image and the runtime chosen for this cluster (docs/containers.md); nullopt = none.
  std::optional<templates::ContainerRun> container;
  std::vector<proc::Outcome> riders; // the answers of make_plan's `riders`, in order
};

// Reads the site profile file at `path` ("" = none: an empty profile).
Result<strategy::Profile> load_profile(const std::string& path);

// Discovers the cluster in one round trip.
Result<model::Cluster> discover_cluster(proc::Runner& runner);

// Probes every candidate's backfill window on the login node in one round trip (slurm/probe.hpp:
// the script, and every answer read by parse_test_only), `concurrency` shapes at once.
Result<strategy::Windows> probe_windows(proc::Runner& runner, const std::vector<strategy::Candidate>& candidates,
                                        const strategy::PlanOptions& options, int concurrency = 1);

// Discovers, probes every candidate's backfill window on the login node in one round trip,
// and plans. `riders`: reads of the caller's that ride in discovery's batch (discover_and_probe).
Result<PlanRun> make_plan(Env& env, const model::JobRequest& request, const strategy::PlanOptions& options,
                          const std::vector<proc::Command>& riders = {});

// --container in a plan (docs/containers.md): the image, the runtime, why, and the step as the best
// strategy runs it; null / no lines without a container.
nlohmann::json container_json(const PlanRun& run);
std::vector<std::string> container_lines(const PlanRun& run);

// Prints a plan: a table on a terminal, or the documented JSON with --json.
void print_plan(Output& output, const PlanRun& run, bool json, bool verbose);

// A dry run: print the plan; exit 0, or exit 4 (ErrorCode::no_strategy) when nothing is viable, as
// the real run would. With --json the plan is the only document on stdout.
Result<int> dry_run(Env& env, const PlanRun& run);

} // namespace rv::app
