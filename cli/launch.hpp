#pragma once
// Submitting a plan: render every strategy, submit them all, race them, clean up.

#include "cli/context.hpp"
#include "cli/planning.hpp"

#include <string>
#include <vector>

namespace rv::cli {

// `rv up` after planning: fan out an allocation and attach a shell (or run `command`).
Result<int> launch_up(Context& ctx, proc::Runner& runner, const PlanRun& plan, const std::string& command);

// `rv run` after planning: fan out a batch job running `command`.
Result<int> launch_run(Context& ctx, proc::Runner& runner, const PlanRun& plan, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow);

} // namespace rv::cli
