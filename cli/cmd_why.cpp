// `rv why [REQUEST]`: why a request waits, what is ahead of it, and what would start sooner.

#include "app/why/why.hpp"
#include "cli/commands.hpp"
#include "cli/plan_options.hpp"

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

struct WhyFlags {
  std::string key;
  bool no_alternatives = false;
};

Result<int> run_why(const WhyFlags& flags, Context& ctx)
{
  RV_TRY(options, to_plan_options(PlanFlags{}, ctx.config.get("max_strategies"), ctx.config.get("time_scale")));
  WhyOptions opts;
  opts.key = flags.key;
  RV_TRY(real, ctx.make_env_for_request(opts.key)); // the request's own cluster
  opts.replan = !flags.no_alternatives;
  opts.plan_options = options;
  RV_TRY(report, explain_request(real->env, opts));
  if (ctx.global.json) {
    print_json(to_json(report));
  } else {
    std::fputs(render_why(report).c_str(), stdout);
  }
  return 0;
}

} // namespace

void setup_why(CLI::App& app, Context& ctx)
{
  auto flags = std::make_shared<WhyFlags>();
  auto* cmd = app.add_subcommand(
      "why", "why a request has not started: each job's reason, its estimated start, what is ahead of it, and the "
             "changes that would start sooner");
  cmd->add_option("request", flags->key, "request id (or prefix), job id, or job name; default: the latest pending");
  cmd->add_flag("--no-alternatives", flags->no_alternatives,
                "skip the re-plan (and its probes) that looks for changes that start sooner");
  cmd->callback([&ctx, flags] { ctx.action = [&ctx, flags] { return run_why(*flags, ctx); }; });
}

} // namespace rv::cli
