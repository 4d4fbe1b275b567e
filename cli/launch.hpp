#pragma once
// Submitting a plan: render every strategy, submit them all, race them, clean up.

#include "cli/context.hpp"
#include "cli/planning.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rv::cli {

// `rv up` after planning: fan out an allocation and attach a shell (or run `command`).
Result<int> launch_up(Context& ctx, proc::Runner& runner, const PlanRun& plan, const std::string& command);

// What smart execution adds to `rv run` (cli/smart_exec.hpp); all empty when nothing was synced.
struct RunExtras {
  std::string request_id;           // made before submission: the snapshot is named after it
  std::string project_key;          // keys RV_CHECKPOINT_DIR by project (snapshot paths change per job)
  std::string setup;                // shell lines the job runs before activating the venv
  std::string venv;                 // the project's venv on the cluster
  std::vector<std::string> outputs; // --output paths, relative to the job's directory
  nlohmann::json sync;              // recorded in the request as "sync" (docs/requests.md)
};

// `rv run` after planning: fan out a batch job running `command`.
Result<int> launch_run(Context& ctx, proc::Runner& runner, const PlanRun& plan, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow, const RunExtras& extras = {});

} // namespace rv::cli
