// `rv up`: fan out an allocation, then a shell (or --run CMDLINE) on the winning node
// (app/run/pipeline.hpp).

#include "cli/commands.hpp"
#include "cli/job_flags.hpp"

#include <unistd.h>

namespace rv::cli {
namespace {

struct UpOptions {
  JobFlags job;
  std::string run;
  bool keep = false; // --keep
};

Result<int> run_up(UpOptions& opts, Context& ctx)
{
  if (opts.keep && !opts.run.empty()) {
    return fail(ErrorCode::usage, "rv up --keep holds the allocation without running anything; --run runs a command",
                "rv up --keep, then rv run --in REQUEST CMD (as often as you like)");
  }
  if (opts.run.empty() && !opts.keep && !opts.job.plan.dry_run && !ctx.global.json && ::isatty(0) == 0) {
    // srun --pty without a terminal only prints TIOCGWINSZ errors: say what to do instead.
    return fail(ErrorCode::usage, "rv up opens a shell on the node, and there is no terminal here",
                "use --keep to hold it for `rv run --in`, --run CMD to run a command there (or --dry-run)");
  }
  // An interactive allocation cannot be split into checkpoint segments.
  if (opts.job.plan.checkpoint) {
    return fail(ErrorCode::usage, "rv up cannot checkpoint: an allocation is not split into segments",
                "use rv run --checkpoint for a program that saves and resumes its state");
  }
  JobFlags flags = opts.job;
  flags.plan.no_checkpoint = true;
  RV_TRY(order, job_order(flags, ctx));
  order.keep = opts.keep;
  RV_TRY(real, ctx.make_env());
  return app::bring_up(real->env, order, opts.run);
}

} // namespace

void setup_up(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<UpOptions>();
  auto* cmd = app.add_subcommand("up", "fan out an allocation, then a shell (or --run CMD) on the winning node");
  add_plan_flags(cmd, opts->job.plan, true);
  cmd->add_option("--run", opts->run,
                  "run this command line on the winning node instead of a shell, as `rv run` would (synced "
                  "project, job environment)")
      ->type_name("CMDLINE");
  cmd->add_flag("--keep", opts->keep,
                "hold the allocation without a shell: return once it is won; it lives until its time ends or "
                "`rv stop` (run commands in it with rv run --in REQUEST)");
  add_job_flags(cmd, opts->job);
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_up(*opts, ctx); }; });
}

} // namespace rv::cli
