// `rv up` and `rv run`: plan the fan-out; with --dry-run, show it and submit nothing.

#include "app/run/launch.hpp"
#include "app/run/planning.hpp"
#include "app/run/smart_exec.hpp"
#include "cli/commands.hpp"
#include "cli/plan_options.hpp"
#include "core/duration.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace rv::cli {
using namespace rv::app;
namespace {

struct UpOptions {
  PlanFlags plan;
  std::string run;
  SmartRunFlags smart;
  std::vector<std::string> env; // --env KEY=VALUE
  bool notify = false;
  bool no_preflight = false;
  std::string idle_timeout; // --idle-timeout DURATION
};

struct RunOptions {
  PlanFlags plan;
  bool follow = false;
  SmartRunFlags smart;
  std::vector<std::string> env;
  bool notify = false;
  bool no_preflight = false;
  std::string idle_timeout;
};

// --no-cache: the flag layer of the config key, so that the settings carry it.
Result<void> apply_no_cache(const PlanFlags& flags, Context& ctx)
{
  return flags.no_cache ? ctx.config.set("discovery_cache", "0", Origin::flag) : Result<void>{};
}

// --idle-timeout in seconds (0 without it), checked before any round trip.
Result<std::int64_t> idle_timeout_seconds(const std::string& text)
{
  if (text.empty()) {
    return 0;
  }
  auto d = parse_duration(text);
  if (!d) {
    return fail(ErrorCode::usage, fmt::format("--idle-timeout {}: {}", text, d.error().message),
                "e.g. 30m or 2h: the job ends after that long with every GPU at 0 % (exit 95)");
  }
  return *d;
}

// The job script's watchdog (docs/gpu.md): the config's sampling interval, --idle-timeout, and
// for `rv up` the warning before the allocation ends.
templates::WatchdogOptions watchdog_options(std::int64_t idle_timeout_s, const Settings& settings, bool interactive)
{
  templates::WatchdogOptions w;
  w.interval_s = settings.watchdog_interval_s;
  w.idle_timeout_s = idle_timeout_s;
  w.interactive = interactive;
  return w;
}

// The flags' own errors (-t 2h, --gpu 0, --time 0h), found before connecting.
Result<void> check_request_flags(const PlanFlags& flags, const Context& ctx)
{
  RV_TRY(request, to_request(flags, request_defaults(ctx.config)));
  (void)request;
  return {};
}

Result<PlanRun> plan_request(const PlanFlags& flags, const Context& ctx, Env& env)
{
  RV_TRY(request, to_request(flags, request_defaults(ctx.config)));
  RV_TRY(options, to_plan_options(flags, ctx.config.get("max_strategies"), ctx.config.get("time_scale")));
  return make_plan(env, request, options);
}

Result<int> run_up(const UpOptions& opts, Context& ctx)
{
  if (opts.run.empty() && !opts.plan.dry_run && !ctx.global.json && ::isatty(0) == 0) {
    // srun --pty without a terminal only prints TIOCGWINSZ errors: say what to do instead.
    return fail(ErrorCode::usage, "rv up opens a shell on the node, and there is no terminal here",
                "use --run CMD to run a command there instead (or --dry-run to see the plan)");
  }
  RV_TRY(env_vars, parse_env_flags(opts.env));
  RV_TRY_VOID(check_request_flags(opts.plan, ctx));
  RV_TRY_VOID(apply_no_cache(opts.plan, ctx));
  RV_TRY(idle_timeout, idle_timeout_seconds(opts.idle_timeout));
  RV_TRY(real, ctx.make_env());
  // An interactive allocation cannot be split into checkpoint segments.
  if (opts.plan.checkpoint) {
    return fail(ErrorCode::usage, "rv up cannot checkpoint: an allocation is not split into segments",
                "use rv run --checkpoint for a program that saves and resumes its state");
  }
  PlanFlags flags = opts.plan;
  flags.no_checkpoint = true;
  RV_TRY(run, plan_request(flags, ctx, real->env));
  if (opts.plan.dry_run) {
    return dry_run(real->env, run);
  }
  // Smart execution as for `rv run`: the command (or the shell) runs in the project's snapshot.
  RV_TRY(smart,
         opts.run.empty() ? prepare_shell(real->env, opts.smart) : prepare_run(real->env, {opts.run}, opts.smart));
  smart.extras.env = std::move(env_vars);
  smart.extras.notify = opts.notify;
  smart.extras.preflight = !opts.no_preflight;
  smart.extras.watchdog = watchdog_options(idle_timeout, real->env.settings, true);
  return launch_up(real->env, run, opts.run, smart.workdir, smart.extras);
}

Result<int> run_run(const RunOptions& opts, Context& ctx)
{
  if (ctx.trailing.empty()) {
    return fail(ErrorCode::usage, "rv run needs a command", "rv run [options] python train.py --lr 3e-4");
  }
  warn_misplaced_flags(ctx.trailing, opts.smart.rv_flags); // --dry-run included
  RV_TRY_VOID(check_request_flags(opts.plan, ctx));        // before any round trip
  for (const auto& o : opts.smart.outputs) {               // before any round trip
    RV_TRY(ok, templates::check_output_path(o));
    (void)ok;
  }
  RV_TRY(env_vars, parse_env_flags(opts.env));
  RV_TRY_VOID(apply_no_cache(opts.plan, ctx));
  RV_TRY(idle_timeout, idle_timeout_seconds(opts.idle_timeout));
  RV_TRY(real, ctx.make_env());
  RV_TRY(run, plan_request(opts.plan, ctx, real->env));
  if (opts.plan.dry_run) {
    return dry_run(real->env, run);
  }
  // Smart execution: sync the project, snapshot it, install its deps (docs/sync.md).
  RV_TRY(smart, prepare_run(real->env, ctx.trailing, opts.smart));
  smart.extras.env = std::move(env_vars);
  smart.extras.notify = opts.notify;
  smart.extras.preflight = !opts.no_preflight;
  smart.extras.watchdog = watchdog_options(idle_timeout, real->env.settings, false);
  return launch_run(real->env, run, ctx.trailing, smart.workdir, opts.follow, smart.extras);
}

// --workdir, --no-sync, --env, --notify, --no-preflight and --idle-timeout, which `rv run` and
// `rv up` share.
void add_job_flags(CLI::App* cmd, SmartRunFlags& smart, std::vector<std::string>& env, bool& notify, bool& no_preflight,
                   std::string& idle_timeout)
{
  cmd->add_flag("--notify", notify,
                "tell notify_email (Slurm mail) and/or notify_webhook (signed POSTs from the job) when the job "
                "starts, ends or is resubmitted (docs/notifications.md)");
  cmd->add_flag("--no-preflight", no_preflight,
                "skip the in-job GPU check that runs on every node before the command (docs/preflight.md)");
  cmd->add_option("--idle-timeout", idle_timeout,
                  "end the job after this long (30m, 2h) with every GPU at 0 %: exit 95; a multi-node batch job "
                  "whose log and GPUs stay unchanged that long ends with 94 (docs/gpu.md)")
      ->type_name("DURATION");
  cmd->add_option("--env", env,
                  "KEY=VALUE: a variable for the job, exported byte for byte after rv's own; repeat for more "
                  "(not for secrets: they go through `rv env set`)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--workdir", smart.workdir,
                  "remote directory the command runs in, without syncing (default: the project's snapshot when "
                  "the command names a local file, else your home)")
      ->type_name("DIR");
  cmd->add_flag("--no-sync", smart.no_sync, "do not sync the project even if the command names local files");
}

} // namespace

void setup_up(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<UpOptions>();
  auto* cmd = app.add_subcommand("up", "fan out an allocation, then a shell (or --run CMD) on the winning node");
  add_plan_flags(cmd, opts->plan, true);
  cmd->add_option("--run", opts->run,
                  "run this command line on the winning node instead of a shell, as `rv run` would (synced "
                  "project, job environment)")
      ->type_name("CMDLINE");
  add_job_flags(cmd, opts->smart, opts->env, opts->notify, opts->no_preflight, opts->idle_timeout);
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_up(*opts, ctx); }; });
}

void setup_run(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "fan out a batch job running CMD; return once submitted (-f: follow it)");
  add_plan_flags(cmd, opts->plan, true);
  cmd->add_flag("-f,--follow", opts->follow, "wait for the winner, stream its log, exit with the job's status");
  add_job_flags(cmd, opts->smart, opts->env, opts->notify, opts->no_preflight, opts->idle_timeout);
  cmd->add_option("-o,--output", opts->smart.outputs,
                  "after the job, copy PATH (relative to the job's directory) to its output directory; "
                  "repeat for more (fetch: rv sync pull REQUEST)")
      ->type_name("PATH")
      ->allow_extra_args(false)
      ->delimiter(',');
  for (const auto* opt : cmd->get_options()) {
    for (const auto& n : opt->get_lnames()) {
      opts->smart.rv_flags.push_back("--" + n);
    }
    for (const auto& n : opt->get_snames()) {
      opts->smart.rv_flags.push_back("-" + n);
    }
  }
  cmd->footer("Options go before CMD; everything from CMD on belongs to CMD (`--` works too).");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_run(*opts, ctx); }; });
}

} // namespace rv::cli
