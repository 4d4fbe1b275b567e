// `rv status`: GPUs free per type and partition, the user's active requests, fair-share, usage
// against the association's limits, SU of the last 30 days, the storage quota. One round trip.

#include "app/clusters.hpp"
#include "app/manage/cluster_status.hpp"
#include "cli/commands.hpp"
#include "cli/per_cluster.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace rv::cli {
namespace {

// `rv status --host A --host B`: each cluster's status, asked of all at once, one after the other
// on the screen; with --json {"clusters": [{"host", "status" | "error"}]}. Exit 1 when one failed.
Result<int> run_status_across(Context& ctx, app::Env& env)
{
  const std::function<Result<app::ClusterStatus>(app::Env&)> ask = [](app::Env& e) { return app::cluster_status(e); };
  return show_per_cluster<app::ClusterStatus>(
      ctx.global.json, app::on_every_cluster(env, env.settings.hosts, ask),
      [](const std::string&, const app::ClusterStatus& st) {
        return nlohmann::json{{"status", app::to_json(st)}};
      },
      [](const std::string& host, const app::ClusterStatus& st) {
        std::string text = fmt::format("== {} ==\n", host);
        for (const auto& line : app::status_lines(st)) {
          text += line + "\n";
        }
        return text;
      });
}

Result<int> run_status(Context& ctx)
{
  RV_TRY(real, ctx.make_env());
  if (real->env.settings.hosts.size() > 1) {
    return run_status_across(ctx, real->env);
  }
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
