// `rv run [options] CMD...`: fan out a batch job running CMD (app/run/pipeline.hpp).

#include "app/run/launch/launch.hpp"
#include "cli/after_work.hpp"
#include "cli/commands.hpp"
#include "cli/job_flags.hpp"
#include "cli/run_after.hpp"
#include "cli/run_in.hpp"
#include "cli/study_flags.hpp"
#include "cli/task_file.hpp"
#include "templates/render.hpp"

#include <fmt/format.h>

namespace rv::cli {
namespace {

struct RunOptions {
  JobFlags job;
  bool follow = false;
  std::string after; // --after REQ[:ok|any] (cli/run_after.hpp)
  InFlags in;        // --in, --one (cli/run_in.hpp)
  CLI::App* cmd = nullptr;
  app::study::StudyFlags study;
};

Result<int> run_run(RunOptions& opts, Context& ctx)
{
  if (!opts.in.request.empty() || opts.in.one) {
    if (opts.in.request.empty()) {
      return fail(ErrorCode::usage, "--one goes with --in", "rv run --in REQUEST --one CMD");
    }
    if (!opts.after.empty()) {
      return fail(ErrorCode::usage, "--after does not go with --in: a step starts in the allocation at once",
                  "rv run --after REQ CMD submits a new request instead");
    }
    if (opts.study.any()) {
      return fail(ErrorCode::usage, "--array/--sweep do not go with --in: a study submits its own workers",
                  "rv run --array ... CMD (without --in)");
    }
    if (!opts.job.container.empty()) {
      return fail(ErrorCode::usage, "--container does not go with --in: the step runs where the allocation runs",
                  "rv run --container IMAGE CMD runs it as a request of its own");
    }
    return run_in_allocation(opts.in, opts.job, opts.follow, *opts.cmd, ctx);
  }
  // A task file (cli/task_file.hpp) sets flags and the study that the command line did not give.
  RV_TRY(asked, command_or_task_file(ctx.trailing, opts.job, opts.study, *opts.cmd, ctx));
  const auto& command = asked.words;
  app::warn_misplaced_flags(ctx.trailing, opts.job.smart.rv_flags); // --dry-run included
  for (const auto& o : opts.job.smart.outputs) {                    // before any round trip
    RV_TRY(ok, templates::check_output_path(o));
    (void)ok;
  }
  RV_TRY(order, job_order(opts.job, ctx));
  RV_TRY_VOID(read_sweep_file(opts.study)); // a study (docs/studies.md), checked before any round trip
  order.study = opts.study;
  if (!order.study.any() && !order.study.prefer.empty()) {
    return fail(ErrorCode::usage,
                fmt::format("--prefer {} is for a study (--array, --sweep, or a task file's array or [sweep]): one "
                            "request races its strategies",
                            order.study.prefer),
                "rv run --array 0-15 --prefer cost ... (or leave --prefer out)");
  }
  if (order.study.any() && !opts.after.empty()) {
    return fail(ErrorCode::usage, "--after does not go with --array/--sweep yet",
                "start the study once the other request has ended, or chain single runs with --after");
  }
  if (order.study.any()) {
    auto checked = app::study::make_study(order.study, app::command_line_of(command), order.study_task_time_s());
    if (!checked) {
      auto e = checked.error();
      if (!asked.study_file.empty()) { // the study (or part of it) is the task file's
        e.message = asked.study_file + ": " + e.message;
      }
      return std::unexpected(e);
    }
  }
  RV_TRY(real, ctx.make_env());
  RV_TRY_VOID(apply_after(opts.after, order, *real, ctx, opts.follow));
  auto result = app::run_command(real->env, order, command, opts.follow);
  if (opts.follow) {
    real->env.after.requests.clear(); // the race's polls recorded Slurm's estimates
  }
  return finish_in_background(*real, std::move(result));
}

} // namespace

void setup_run(CLI::App& app, Context& ctx)
{
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "fan out a batch job running CMD; return once submitted (-f: follow it)");
  add_plan_flags(cmd, opts->job.plan, true);
  cmd->add_flag("-f,--follow", opts->follow, "wait for the winner, stream its log, exit with the job's status");
  add_job_flags(cmd, opts->job);
  add_task_flags(cmd, opts->job);
  add_after_flag(cmd, opts->after);
  add_in_flags(cmd, opts->in);
  opts->cmd = cmd;
  cmd->add_option("-o,--output", opts->job.smart.outputs,
                  "after the job, copy PATH (relative to the job's directory) to its output directory; "
                  "repeat for more (fetch: rv sync pull REQUEST)")
      ->type_name("PATH")
      ->allow_extra_args(false)
      ->delimiter(',');
  add_study_flags(cmd, opts->study);
  for (const auto* opt : cmd->get_options()) {
    for (const auto& n : opt->get_lnames()) {
      opts->job.smart.rv_flags.push_back("--" + n);
    }
    for (const auto& n : opt->get_snames()) {
      opts->job.smart.rv_flags.push_back("-" + n);
    }
  }
  cmd->footer("Options go before CMD; everything from CMD on belongs to CMD (`--` works too).\n"
              "A task file instead of CMD (rv run [options] task.toml; rv.toml in the project when no CMD is "
              "given) holds the command and its resources; flags override its keys (docs/taskfile.md).");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return run_run(*opts, ctx); }; });
}

} // namespace rv::cli
