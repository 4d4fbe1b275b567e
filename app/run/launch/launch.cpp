#include "app/run/launch/launch.hpp"

#include "app/request/reap.hpp"
#include "app/request/watchdog_samples.hpp"
#include "app/run/launch/race.hpp"
#include "app/run/launch/refanout.hpp"
#include "app/run/launch/submit.hpp"
#include "app/run/show/follow.hpp"
#include "app/run/show/live_status.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/shell.hpp"
#include "core/store/json_bytes.hpp"
#include "core/text.hpp"
#include "slurm/gpu_faults.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/jobs.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace rv::app {
std::string submitted_summary(const RequestRecord& rec, const strategy::Plan& plan)
{
  // The best submitted strategy: the plan is in rank order, and so are the record's jobs.
  const model::Strategy* best = nullptr;
  for (const auto& j : rec.jobs) {
    if (j.job_id.empty()) {
      continue;
    }
    for (const auto& s : plan.strategies) {
      if (s.id == j.strategy_id) {
        best = &s;
        break;
      }
    }
    if (best) {
      break;
    }
  }
  std::string out;
  if (best) {
    const auto wait = wait_in_words(best->est_wait_s);
    out += fmt::format("best estimate: {} ({}) starts {}, {:.1f} SU\n", best->id, best->label, wait, best->est_su);
  }
  out += text::next_steps({{"rv logs -f " + rec.id, "wait for the winner and follow it"},
                           {"rv ps", "where each strategy stands"},
                           {"rv stop " + rec.id, "cancel every job of it"}});
  return out;
}

std::string kept_summary(const RequestRecord& rec, const JobRecord& winner)
{
  return fmt::format("holding allocation {} on {} for request {} until its time ends or rv stop {}\n", winner.job_id,
                     winner.node_list.empty() ? std::string("?") : winner.node_list, rec.id, rec.id) +
         text::next_steps({{"rv run --in " + rec.id + " -f python eval.py", "a command in it, the project synced"},
                           {"rv ssh " + rec.id, "a shell in it"},
                           {"rv stop " + rec.id, "release it"}});
}

std::string command_line_of(const std::vector<std::string>& command)
{
  // One word is a shell command line; several words are an argv, quoted so they arrive exactly.
  return command.size() == 1 ? command.front() : proc::shell_join(command);
}

Result<int> launch_run(Env& env, const PlanRun& planned, const std::vector<std::string>& command,
                       const std::string& workdir, bool follow, const RunExtras& extras)
{
  const std::string line = command_line_of(command);
  std::optional<Launched> first;
  {
    LiveStatus live(env, follow);
    live.phase(submitting_text(planned.plan.strategies.size(), env.cluster.where()), true); // said once submitted
    RunExtras this_run = extras;
    this_run.followed = follow;
    RV_TRY(launched, submit_request(env, planned, line, workdir, "run", this_run));
    if (!follow) {
      launched.release(); // the jobs run on without rv; `rv ps` cleans up after them
      if (env.json) {
        env.output.out(store::dump_for_display(to_json(launched.rec)) + "\n");
      } else if (env.quiet) {
        env.output.out(launched.rec.id + "\n");
      } else {
        env.output.out(submitted_summary(launched.rec, planned.plan));
      }
      return 0;
    }
    first.emplace(std::move(launched));
  }
  return follow_run(env, planned, std::move(*first), line, workdir, extras);
}

Result<int> follow_run(Env& env, const PlanRun& planned, Launched submitted, const std::string& line,
                       const std::string& workdir, const RunExtras& extras, const RetryElsewhere& elsewhere)
{
  auto& runner = env.cluster;
  auto& store = env.requests;
  PlanRun current = planned;
  RunExtras this_try = extras;
  this_try.followed = true;
  this_try.snapshot.reset(); // made by the first submission; a retry runs from it

  std::optional<Launched> first(std::move(submitted));
  // The nodes that failed this request, round by round (a round across clusters carries it in).
  std::vector<RefanoutStep> history = refanout_history(extras.refanout);
  for (int attempt = static_cast<int>(history.size());; ++attempt) {
    LiveStatus live(env, true);
    if (!first) {
      live.phase(submitting_text(current.plan.strategies.size(), runner.where()), true);
      RV_TRY(next, submit_request(env, current, line, workdir, "run", this_try));
      first.emplace(std::move(next));
    }
    Launched launched = std::move(*first);
    first.reset();
    live.event(submitted_event(launched.rec));
    // The winner was just seen starting: the follow's first round trip waits for its first output
    // and carries the node read the race left (issue #38 item 7).
    FollowStart start;
    start.just_started = true;
    RV_TRY(winner, race_request(env, launched, live, &start.along));
    auto& rec = launched.rec;
    JobOutput job_output(env, live, rec.id, winner.job_id, winner.node_list);
    auto status = follow_job(
        runner, env.clock, job_output, rec, winner, 0, 0,
        [&](const std::string& prev, const std::string& next) {
          record_next_segment(store, rec, prev, next);
          winner.job_id = next;
          job_output.set_job(next);
        },
        std::move(start));
    job_output.flush();
    if (!status) {
      return std::unexpected(status.error()); // `launched` saves the record and removes the secrets
    }
    for (auto& j : rec.jobs) {
      if (j.strategy_id == rec.winner) {
        j.state = status->state;
      }
    }
    // Re-fan-out: the winner failed the preflight (exit 96) or died of a GPU fault within minutes
    // of its start: race again without the node, as a new request (new id, new claim) that runs
    // from the same snapshot and carries the history.
    EndedWinner ended{status->state, status->exit_status, status->run_time_s, winner.node_list, {}, {}};
    if (status->state == slurm::JobState::failed) {
      ended.log_tail = winner_log_tail(runner, rec, winner);
      if (status->exit_status == slurm::k_preflight_exit) {
        ended.preflight = winner_preflight_verdict(runner, rec, winner);
      }
    }
    auto decision = decide_refanout(ended, current.request.exclude_nodes, attempt, env.settings.refanout_max);
    std::string next_id;
    if (!decision.step.kind.empty()) {
      decision.step.request_id = rec.id;
      decision.step.job_id = winner.job_id;
      history.push_back(decision.step);
      // Across clusters the next round's members get their own ids (they carry the history).
      next_id = decision.retry && !elsewhere ? store::new_request_id() : std::string();
      auto excluded = current.request.exclude_nodes;
      excluded.insert(excluded.end(), decision.exclude.begin(), decision.exclude.end());
      rec.refanout = refanout_json(history, excluded, next_id);
    }
    launched.finish(ended_state(status->state)); // a FAILED winner is a failed request, not "done"
    if (decision.retry) {
      const auto& st = decision.step;
      const auto next_round = elsewhere ? std::string("a new race across the clusters") : "request " + next_id;
      if (st.kind == "gpu_fault") {
        spdlog::warn("job {} failed after {} s with a GPU fault ('{}') on {}: retrying without {} (round {}/{}, {})",
                     winner.job_id, status->run_time_s, st.reason, st.node, st.node, attempt + 1,
                     env.settings.refanout_max, next_round);
      } else {
        spdlog::warn("job {}: node {} failed the preflight ({}): the command did not run; retrying without {} "
                     "(round {}/{}, {})",
                     winner.job_id, st.node, st.reason, st.node, attempt + 1, env.settings.refanout_max, next_round);
      }
      auto request = current.request;
      request.exclude_nodes.insert(request.exclude_nodes.end(), decision.exclude.begin(), decision.exclude.end());
      if (elsewhere) { // across clusters: every cluster races again, this one without the node
        RunExtras next = this_try;
        next.request_id.clear();
        next.refanout = refanout_json(history, request.exclude_nodes, "");
        return elsewhere(request.exclude_nodes, next);
      }
      auto replanned = make_plan(env, request, current.options);
      if (!replanned) { // say why the request got narrower than the user asked
        auto e = replanned.error();
        e.message += fmt::format(" (re-fan-out without {}, which failed)", text::join(request.exclude_nodes, ","));
        return std::unexpected(e);
      }
      current = std::move(*replanned);
      this_try.request_id = next_id;
      this_try.refanout = refanout_json(history, request.exclude_nodes, "");
      continue;
    }
    if (!decision.why_not.empty()) {
      spdlog::warn("job {}: {} {} ({}): not retried: {}", winner.job_id, decision.step.node,
                   decision.step.kind == "preflight" ? "failed the preflight" : "had a GPU fault", decision.step.reason,
                   decision.why_not);
    }
    const int code = exit_code_of(*status, status->job_id);
    live.event(ended_event(rec.id, *status, code));
    return code;
  }
}

namespace {

// The bash program of `rv up`'s step: the job's environment as the batch script sets it (the
// secrets file read by its path, fail-closed), then `tail` (the command, or a shell).
Result<std::string> step_program(const PlanRun& planned, const Launched& launched, const JobRecord& winner,
                                 const std::string& command, const std::string& workdir, const RunExtras& extras)
{
  const auto& strategies = planned.plan.strategies;
  auto s = std::find_if(strategies.begin(), strategies.end(),
                        [&](const model::Strategy& x) { return x.id == winner.strategy_id; });
  if (s == strategies.end()) {
    return fail(ErrorCode::generic, fmt::format("the winner {} is not in the plan", winner.strategy_id));
  }
  auto request = planned.request;
  request.job_name = launched.rec.name;
  auto ro = render_options(launched.rec, launched.paths, command, workdir, extras);
  ro.container = planned.container; // the shell or the command runs in the container too
  RV_TRY(environment, templates::render_step_environment(*s, request, ro));
  return environment + templates::step_tail(ro, command.empty());
}

} // namespace

Result<Launched> submit_up(Env& env, const PlanRun& planned, const std::string& command, const std::string& workdir,
                           const RunExtras& extras)
{
  // The allocation holds its nodes with a sleep; the shell or CMD joins it with srun --overlap and
  // gets the job's environment there (the holder itself needs no venv or set-up).
  LiveStatus live(env, false);
  live.phase(submitting_text(planned.plan.strategies.size(), env.cluster.where()), true);
  RunExtras holder = extras;
  holder.setup.clear();
  holder.venv.clear();
  holder.followed = true; // the shell's (or CMD's) output owns stdout
  return submit_request(env, planned, "exec sleep 2147483647", workdir, "up", holder,
                        command.empty() ? "(interactive shell)" : command);
}

Result<int> launch_up(Env& env, const PlanRun& planned, const std::string& command, const std::string& workdir,
                      const RunExtras& extras)
{
  RV_TRY(launched, submit_up(env, planned, command, workdir, extras));
  return attach_up(env, planned, std::move(launched), command, workdir, extras);
}

Result<int> attach_up(Env& env, const PlanRun& planned, Launched launched, const std::string& command,
                      const std::string& workdir, const RunExtras& extras)
{
  auto& runner = env.cluster;
  LiveStatus live(env, false); // `rv up --json` prints one document, not events
  RV_TRY(winner, race_request(env, launched, live));
  if ((env.json || extras.keep) && command.empty()) {
    launched.release();
    if (env.json) {
      env.output.out(store::dump_for_display(to_json(launched.rec)) + "\n");
    } else {
      env.output.out(kept_summary(launched.rec, winner));
    }
    return 0; // an allocation for scripts and `rv run --in`: `rv stop` releases it
  }
  // The step starts from srun's environment on the login node; the program sets the job's up.
  auto program = step_program(planned, launched, winner, command, workdir, extras);
  slurm::StepOptions step;
  step.job_id = winner.job_id;
  Result<int> status = 0;
  std::string out, err;
  if (!program) {
    status = std::unexpected(program.error());
  } else if (!command.empty()) {
    proc::Command c;
    c.argv = slurm::step_argv(step, {"bash", "-c", *program});
    c.timeout = std::chrono::milliseconds(0);
    if (!env.json) { // with --json the output comes back in the one document
      c.on_stdout = [&](std::string_view s) { env.output.out(s); };
      c.on_stderr = [&](std::string_view s) { env.output.err(s); };
    }
    auto o = runner.run(c);
    status = o ? Result<int>(o->status()) : Result<int>(std::unexpected(o.error()));
    if (o) {
      out = std::move(o->out);
      err = std::move(o->err);
    }
  } else {
    step.pty = true;
    status = runner.run_interactive(slurm::step_argv(step, {"bash", "-c", *program}));
  }
  // --idle-timeout: the watchdog may have ended the allocation under the shell; say so.
  if (extras.watchdog.idle_timeout_s > 0) {
    if (auto ended = read_watchdog_end(runner, launched.rec, winner.job_id)) {
      spdlog::warn("the watchdog ended allocation {}: {}", winner.job_id, ended->second);
      status = ended->first;
    }
  }
  // Release the allocation whatever happened to the shell or the command.
  clear_interrupt();
  if (status && *status != 0) { // the allocation may have ended in its preflight (exit 96)
    if (auto f = slurm::find_preflight_failure(winner_preflight_verdict(runner, launched.rec, winner))) {
      spdlog::error("node {} failed the preflight ({}): the allocation ended before the {} started; run rv up "
                    "again with --exclude {} (docs/preflight.md)",
                    f->node, f->reason, command.empty() ? "shell" : "command", f->node);
    }
  }
  if (auto c = slurm::cancel_jobs(runner, {winner.job_id}, launched.rec.name); !c) {
    // Still held: the record stays live (and keeps its secrets file) so that `rv ps` lists it and
    // `rv stop` releases it; recorded as released, nothing ever would (#15 campaign).
    spdlog::warn("could not release allocation {}: {}; `rv stop {}` releases it", winner.job_id, c.error().message,
                 launched.rec.id);
    launched.release();
    return status;
  }
  spdlog::info("released allocation {}", winner.job_id);
  for (auto& j : launched.rec.jobs) {
    if (j.job_id == winner.job_id) {
      j.state = slurm::JobState::cancelled; // released by rv: the allocation is gone, so `rv ps` no longer lists it
    }
  }
  // done: the shell or the command ran (its status is the exit code); failed: rv could not run the step.
  launched.finish(status ? RequestState::done : RequestState::failed);
  if (env.json && status) {
    env.output.out(store::dump_for_display(
                       {{"request", to_json(launched.rec)}, {"exit_code", *status}, {"stdout", out}, {"stderr", err}}) +
                   "\n");
  }
  return status;
}

} // namespace rv::app
