// `rv cost -g N [-t TYPE] --time T`: what the request costs on each GPU type.

#include "app/clusters.hpp"
#include "app/run/plan/planning.hpp"
#include "cli/commands.hpp"
#include "cli/per_cluster.hpp"
#include "cli/plan_options.hpp"
#include "core/duration.hpp"
#include "strategy/cost.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

void print_table(const strategy::CostTable& table, const model::JobRequest& request, double weight)
{
  std::fputs(fmt::format("{} GPU(s) for {}:\n", request.gpus, format_human_duration(request.time_s)).c_str(), stdout);
  std::fputs(fmt::format("  {:<16} {:<12} {:>5} {:>6} {:>9} {:>10} {:>10}  {}\n", "type", "partition", "shape", "cpus",
                         "mem", "SU/hour", weight == 1 ? "SU" : "SU x w", "how")
                 .c_str(),
             stdout);
  for (const auto& row : table.rows) {
    std::fputs(fmt::format("  {:<16} {:<12} {:>5} {:>6} {:>8}G {:>10.1f} {:>10.1f}  {}\n", row.gpu_type, row.partition,
                           fmt::format("{}x{}", row.nodes, row.gpus_per_node), row.cpus_per_task,
                           row.mem_mb_per_node / 1024, row.rate.su_per_hour, row.su * weight, row.rate.method)
                   .c_str(),
               stdout);
  }
  for (const auto& r : table.rejected) {
    std::fputs(fmt::format("  {:<16} {:<12} not possible: {}\n", r.gpu_type, r.partition, r.reason).c_str(), stdout);
  }
}

Result<int> run_cost(const PlanFlags& flags, Context& ctx)
{
  RV_TRY(request, to_request(flags, request_defaults(ctx.config)));
  RV_TRY(options, to_plan_options(flags, ctx.config.get("max_strategies"), ctx.config.get("time_scale")));
  RV_TRY(profile, load_profile(ctx.config.get("profile")));
  const std::function<Result<strategy::CostTable>(Env&)> cost = [&](Env& e) -> Result<strategy::CostTable> {
    RV_TRY(cluster, discover_cluster(e.cluster));
    return strategy::cost_table(cluster, profile, request, options);
  };
  RV_TRY(real, ctx.make_env());
  auto& env = real->env;
  if (env.settings.hosts.size() <= 1) {
    RV_TRY(table, cost(env));
    if (ctx.global.json) {
      print_json(strategy::to_json(table));
      return 0;
    }
    print_table(table, request, 1);
    return 0;
  }
  // Across clusters (docs/multi-cluster.md): every cluster at once, each SU times its weight.
  return show_per_cluster<strategy::CostTable>(
      ctx.global.json, on_every_cluster(env, env.settings.hosts, cost),
      [&](const std::string& host, const strategy::CostTable& table) {
        return nlohmann::json{{"su_weight", env.settings.su_weight(host)}, {"cost", strategy::to_json(table)}};
      },
      [&](const std::string& host, const strategy::CostTable& table) {
        std::fputs(fmt::format("== {} (SU weight {}) ==\n", host, env.settings.su_weight(host)).c_str(), stdout);
        print_table(table, request, env.settings.su_weight(host));
        return std::string();
      });
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
