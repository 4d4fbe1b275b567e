// `rv status`: GPUs free per type and partition, the user's active requests, fair-share, usage
// against the association's limits, SU of the last 30 days, the storage quota. One round trip.

#include "app/manage/cluster_status.hpp"
#include "cli/commands.hpp"

#include <cstdio>

namespace rv::cli {
namespace {

Result<int> run_status(Context& ctx)
{
  RV_TRY(real, ctx.make_env());
  RV_TRY(s, app::cluster_status(real->env));
  if (ctx.global.json) {
    print_json(app::to_json(s));
    return 0;
  }
  for (const auto& line : app::status_lines(s)) {
    std::fputs((line + "\n").c_str(), stdout);
  }
  return 0;
}

} // namespace

void setup_status(CLI::App& app, Context& ctx)
{
  auto* status = app.add_subcommand("status", "GPUs free now, your requests, fair-share, limits and usage");
  status->callback([&ctx] { ctx.action = [&ctx] { return run_status(ctx); }; });
}

} // namespace rv::cli
