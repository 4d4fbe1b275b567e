#include "app/run/pipeline.hpp"

#include "app/run/launch/across.hpp"
#include "app/run/launch/launch.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/plan/planning.hpp"
#include "app/run/study_run.hpp"
#include "templates/watchdog.hpp"

#include <map>
#include <memory>

namespace rv::app {
namespace {

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

void add_order(RunExtras& extras, const JobOrder& order, const Settings& settings, bool interactive)
{
  extras.env = order.env;
  extras.secrets = order.secrets;
  extras.dependency = order.dependency;
  extras.after = order.after;
  extras.notify = order.notify;
  extras.preflight = order.preflight;
  extras.watchdog = watchdog_options(order.idle_timeout_s, settings, interactive);
  extras.keep = order.keep;
}

// The same walk across the clusters of the `hosts` setting (app/run/launch/across.hpp). A re-fan-out round
// (rv run -f, a failed node) comes back here: every cluster races again, the failed one without
// its bad nodes, so the request may move to another cluster.
Result<int> across(Env& env, const JobOrder& order, AcrossLaunch how,
                   const std::map<std::string, std::vector<std::string>>& excluded = {})
{
  RV_TRY(plans, make_plans(env, env.settings.hosts, order.request, order.plan_options, excluded));
  if (order.dry_run) {
    return dry_run_across(env, plans);
  }
  if (how.mode == AcrossMode::follow) {
    how.elsewhere = [&env, &order, how, excluded](const std::string& host, const std::vector<std::string>& nodes,
                                                  const RunExtras& next) {
      auto round = excluded;
      round[host] = nodes;
      AcrossLaunch again = how;
      again.refanout = next.refanout;
      return across(env, order, again, round);
    };
  }
  return launch_across(env, plans, how);
}

// The sync's flags with rv's root as the plan's discovery resolved it: the sync root below it is
// then known without a round trip.
SmartRunFlags known_root(const SmartRunFlags& flags, const PlanRun& run)
{
  SmartRunFlags f = flags;
  if (run.roots) {
    f.resolved_root = run.roots->root;
  }
  return f;
}

// What the order needs from the local stores is checked before anything is planned or synced:
// `--notify` with no address or no webhook secret, a task file's secret that is not set
// (ux-review-3 N13: it used to sync first, then fail at the submit).
Result<void> check_stores(Env& env, const JobOrder& order)
{
  if (order.notify || order.secrets) {
    RV_TRY_VOID(job_secrets(env, "check", order.notify, order.secrets));
  }
  return {};
}

} // namespace

Result<int> run_command(Env& env, const JobOrder& order, const std::vector<std::string>& command, bool follow)
{
  RV_TRY_VOID(check_stores(env, order));
  if (order.study.any()) { // a study: workers claim its tasks (app/run/study_run.hpp)
    StudyOrder so{order.request, order.plan_options, order.dry_run, order.study, [&](Env& e) -> Result<SmartRun> {
                    RV_TRY(smart, prepare_run(e, command, order.smart));
                    add_order(smart.extras, order, e.settings, false);
                    return smart;
                  }};
    so.task_time_s = order.study_task_time_s();
    return run_study(env, so, command, follow);
  }
  if (env.settings.hosts.size() > 1) {
    AcrossLaunch how;
    how.mode = follow ? AcrossMode::follow : AcrossMode::submit;
    how.line = command_line_of(command);
    how.prepare = [&](Env& e) -> Result<SmartRun> {
      RV_TRY(smart, prepare_run(e, command, order.smart));
      add_order(smart.extras, order, e.settings, false);
      return smart;
    };
    return across(env, order, std::move(how));
  }
  // The push's listing rides in the plan's discovery batch: after the plan, the push is its apply.
  std::shared_ptr<SyncAhead> ahead;
  if (!order.dry_run) {
    if (auto a = sync_ahead(env, command, order.smart)) {
      ahead = std::make_shared<SyncAhead>(std::move(*a));
    }
  }
  RV_TRY(run,
         make_plan(env, order.request, order.plan_options, ahead ? ahead->commands : std::vector<proc::Command>{}));
  if (order.dry_run) {
    return dry_run(env, run);
  }
  auto flags = known_root(order.smart, run);
  if (ahead) {
    ahead->answers = std::move(run.riders);
    flags.ahead = ahead;
    flags.snapshot_in_submission = true; // launch_run's submission makes it, at the head of its batch
  }
  // Smart execution: sync the project, snapshot it, install its deps (docs/sync.md).
  RV_TRY(smart, prepare_run(env, command, flags));
  add_order(smart.extras, order, env.settings, false);
  return launch_run(env, run, command, smart.workdir, follow, smart.extras);
}

Result<int> bring_up(Env& env, const JobOrder& order, const std::string& command_line)
{
  RV_TRY_VOID(check_stores(env, order));
  if (env.settings.hosts.size() > 1) {
    AcrossLaunch how;
    how.mode = AcrossMode::up;
    how.line = command_line;
    how.prepare = [&](Env& e) -> Result<SmartRun> {
      RV_TRY(smart, command_line.empty() ? prepare_shell(e, order.smart) : prepare_run(e, {command_line}, order.smart));
      add_order(smart.extras, order, e.settings, true);
      return smart;
    };
    return across(env, order, std::move(how));
  }
  RV_TRY(run, make_plan(env, order.request, order.plan_options));
  if (order.dry_run) {
    return dry_run(env, run);
  }
  // Smart execution as for `rv run`: the command (or the shell) runs in the project's snapshot.
  const auto flags = known_root(order.smart, run);
  RV_TRY(smart, command_line.empty() ? prepare_shell(env, flags) : prepare_run(env, {command_line}, flags));
  add_order(smart.extras, order, env.settings, true);
  return launch_up(env, run, command_line, smart.workdir, smart.extras);
}

} // namespace rv::app
