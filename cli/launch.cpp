#include "cli/launch.hpp"

namespace rv::cli {

Result<int> launch_up(Context&, proc::Runner&, const PlanRun&, const std::string&)
{
  return fail(ErrorCode::usage, "rv up can only --dry-run so far", "add --dry-run");
}

Result<int> launch_run(Context&, proc::Runner&, const PlanRun&, const std::vector<std::string>&, const std::string&,
                       bool)
{
  return fail(ErrorCode::usage, "rv run can only --dry-run so far", "add --dry-run");
}

} // namespace rv::cli
