// `rv logs`: the winner's log of a request, or follow it to the end.

#include "app/manage/manage.hpp"
#include "app/manage/step_view.hpp"
#include "cli/commands.hpp"

namespace rv::cli {
using namespace rv::app;
namespace {

Result<int> run_logs(const LogsRequest& opts, Context& ctx)
{
  LogsRequest routed = opts;
  RV_TRY(step, parse_step_ref(routed.key));
  if (step) { // REQUEST/step-N: an `rv run --in` step's log
    RV_TRY(real, ctx.make_env_for_request(step->request));
    return show_step_logs(real->env, step->request, step->n, routed);
  }
  RV_TRY(real, ctx.make_env_for_request(routed.key)); // the request's own cluster
  return show_logs(real->env, routed);
}

} // namespace

void setup_logs(CLI::App& app, Context& ctx)
{
  auto logs_opts = std::make_shared<LogsRequest>();
  auto* logs = app.add_subcommand("logs", "the winner's log (default: the latest request)");
  logs->add_option("request", logs_opts->key,
                   "request id (or prefix), job id, or job name; REQUEST/step-N: one `rv run --in` step");
  logs->add_flag("-f,--follow", logs_opts->follow, "follow until the job ends; exit with its status");
  logs->add_flag("--err", logs_opts->err, "the stderr log");
  logs->add_option("--node", logs_opts->node, "the per-node log of node K (multi-node jobs)")->type_name("K");
  logs->add_option("--tail", logs_opts->tail, "only the last N lines")->type_name("N");
  logs->callback([&ctx, logs_opts] { ctx.action = [&ctx, logs_opts] { return run_logs(*logs_opts, ctx); }; });
}

} // namespace rv::cli
