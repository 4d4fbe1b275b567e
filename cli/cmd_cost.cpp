// `rv cost -g N [-t TYPE] --time T`: what the request costs on each GPU type.

#include "app/run/planning.hpp"
#include "cli/commands.hpp"
#include "cli/plan_options.hpp"
#include "core/duration.hpp"
#include "strategy/cost.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

Result<int> run_cost(const PlanFlags& flags, Context& ctx)
{
  RV_TRY(request, to_request(flags, request_defaults(ctx.config)));
  RV_TRY(options, to_plan_options(flags, ctx.config.get("max_strategies"), ctx.config.get("time_scale")));
  RV_TRY(profile, load_profile(ctx.config.get("profile")));
  RV_TRY(runner, ctx.make_runner());
  RV_TRY(cluster, discover_cluster(*runner));
  RV_TRY(table, strategy::cost_table(cluster, profile, request, options));
  if (ctx.global.json) {
    print_json(strategy::to_json(table));
    return 0;
  }
  std::fputs(fmt::format("{} GPU(s) for {}:\n", request.gpus, format_human_duration(request.time_s)).c_str(), stdout);
  std::fputs(fmt::format("  {:<16} {:<12} {:>5} {:>6} {:>9} {:>10} {:>10}  {}\n", "type", "partition", "shape", "cpus",
                         "mem", "SU/hour", "SU", "how")
                 .c_str(),
             stdout);
  for (const auto& row : table.rows) {
    std::fputs(fmt::format("  {:<16} {:<12} {:>5} {:>6} {:>8}G {:>10.1f} {:>10.1f}  {}\n", row.gpu_type, row.partition,
                           fmt::format("{}x{}", row.nodes, row.gpus_per_node), row.cpus_per_task,
                           row.mem_mb_per_node / 1024, row.rate.su_per_hour, row.su, row.rate.method)
                   .c_str(),
               stdout);
  }
  for (const auto& r : table.rejected) {
    std::fputs(fmt::format("  {:<16} {:<12} not possible: {}\n", r.gpu_type, r.partition, r.reason).c_str(), stdout);
  }
  return 0;
}

} // namespace

void setup_cost(CLI::App& app, Context& ctx)
{
  auto flags = std::make_shared<PlanFlags>();
  auto* cmd = app.add_subcommand("cost", "the SU cost of a request on each GPU type (billing weights x TRES x hours)");
  add_plan_flags(cmd, *flags, false);
  cmd->callback([&ctx, flags] { ctx.action = [&ctx, flags] { return run_cost(*flags, ctx); }; });
}

} // namespace rv::cli
