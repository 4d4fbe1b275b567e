#include "slurm/monitor.hpp"

#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "slurm/jobs.hpp"
#include "slurm/sacct.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/squeue.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

namespace rv::slurm {

bool only_gone_jobs(std::string_view scancel_stderr)
{
  bool any = false;
  for (auto line : text::lines(scancel_stderr)) {
    line = text::trim(line);
    if (line.empty()) {
      continue;
    }
    if (!line.ends_with("Invalid job id specified")) {
      return false;
    }
    any = true;
  }
  return any;
}

namespace {

proc::Command cancel_command(const std::vector<std::string>& job_ids, const std::string& job_name,
                             bool pending_only = false)
{
  // --me: only the user's own jobs, even for an operator or a coordinator whose scancel could
  // cancel others' jobs on a wrong or reused id (the name guards a reused id as well).
  std::vector<std::string> argv = {"scancel", "--me"};
  if (!job_name.empty()) {
    argv.push_back("--name=" + job_name);
  }
  if (pending_only) {
    argv.push_back("--state=PENDING");
  }
  argv.insert(argv.end(), job_ids.begin(), job_ids.end());
  auto cmd = patient_command(std::move(argv));
  cmd.uninterruptible = true;
  return cmd;
}

// What scancel's outcome means for cancel_jobs.
Result<void> cancel_outcome(const proc::Outcome& outcome, const std::vector<std::string>& job_ids,
                            const std::string& job_name)
{
  if (!outcome.ok() && !job_name.empty() && only_gone_jobs(outcome.err)) {
    // With --name, Slurm 22.05 answers "Invalid job id specified" (exit 1) for a job that has
    // already ended (e.g. cancelled a moment ago by the winner's guard): nothing is left to cancel.
    spdlog::debug("scancel: {} had already ended: {}", text::join(job_ids, " "), outcome.err);
    return {};
  }
  if (!outcome.ok()) {
    return fail(ErrorCode::slurm_rejected,
                fmt::format("scancel {} failed (exit {}): {}", text::join(job_ids, " "), outcome.status(), outcome.err),
                fmt::format("cancel them by hand: scancel {}", text::join(job_ids, " ")));
  }
  spdlog::debug("cancelled {}", text::join(job_ids, " "));
  return {};
}

} // namespace

Result<void> cancel_jobs(proc::Runner& runner, const std::vector<std::string>& job_ids, const std::string& job_name,
                         bool pending_only)
{
  if (job_ids.empty()) {
    return {};
  }
  RV_TRY(outcome, runner.run(cancel_command(job_ids, job_name, pending_only)));
  return cancel_outcome(outcome, job_ids, job_name);
}

namespace {

// One poll from squeue's answer `sq` (scontrol and sacct asked about the ids it no longer knows).
Result<std::map<std::string, JobView>> views_from_squeue(proc::Runner& runner, const proc::Outcome& sq,
                                                         const std::vector<std::string>& job_ids,
                                                         std::int64_t now_epoch, int* controller_calls,
                                                         const std::map<std::string, std::string>& names)
{
  auto ours = [&](const std::string& id, const std::string& name) {
    auto it = names.find(id);
    return it == names.end() || it->second.empty() || it->second == name;
  };
  std::map<std::string, JobView> views;
  auto count = [&](int n) {
    if (controller_calls) {
      *controller_calls += n;
    }
  };
  count(1);
  // squeue exits 1 with "Invalid job id" when none of the ids is known any more.
  if (sq.ok()) {
    RV_TRY(rows, parse_squeue(sq.out, squeue_format));
    for (const auto& row : rows) {
      if (!ours(row.job_id, row.name)) {
        continue; // the id now names another job
      }
      JobView v;
      v.state = parse_job_state(row.state);
      v.reason = row.reason;
      v.nodes = row.nodes;
      v.source = "squeue";
      v.seen_epoch = now_epoch;
      v.elapsed_s = row.elapsed_s;
      if (v.state == JobState::pending && row.start_time) {
        v.start_estimate = format_cluster_time(*row.start_time);
      }
      if (is_started(v.state) || is_terminal(v.state)) {
        v.start_epoch = row.elapsed_s > 0 || is_started(v.state) || !row.nodes.empty() ? now_epoch - row.elapsed_s : 0;
      }
      views[row.job_id] = v;
    }
  } else {
    spdlog::debug("squeue exit {}: {}", sq.status(), sq.err);
  }
  std::vector<std::string> vanished;
  for (const auto& id : job_ids) {
    if (!views.count(id)) {
      vanished.push_back(id);
    }
  }
  if (vanished.empty()) {
    return views;
  }
  RV_TRY(ended, look_up_gone(runner, vanished, now_epoch, names));
  count(static_cast<int>(vanished.size()));
  views.merge(ended);
  return views;
}

} // namespace

Result<std::map<std::string, JobView>> poll_jobs(proc::Runner& runner, const std::vector<std::string>& job_ids,
                                                 std::int64_t now_epoch, int* controller_calls,
                                                 const std::map<std::string, std::string>& names)
{
  RV_TRY(sq, runner.run(patient_command(squeue_argv(job_ids))));
  return views_from_squeue(runner, sq, job_ids, now_epoch, controller_calls, names);
}

Result<std::map<std::string, JobView>> look_up_gone(proc::Runner& runner, const std::vector<std::string>& vanished,
                                                    std::int64_t now_epoch,
                                                    const std::map<std::string, std::string>& names)
{
  auto ours = [&](const std::string& id, const std::string& name) {
    auto it = names.find(id);
    return it == names.end() || it->second.empty() || it->second == name;
  };
  std::map<std::string, JobView> views;
  // scontrol first (the controller still knows recently finished jobs), then accounting,
  // which may lag: no record at all leaves the job unknown, i.e. alive.
  std::vector<proc::Command> batch;
  for (const auto& id : vanished) {
    batch.push_back(patient_command(show_job_argv(id)));
  }
  batch.push_back(patient_command(sacct_argv(vanished)));
  RV_TRY(outs, runner.run_batch(batch));
  for (std::size_t i = 0; i < vanished.size(); ++i) {
    if (!outs[i].ok()) {
      continue;
    }
    auto jobs = parse_scontrol_jobs(outs[i].out);
    if (!jobs || jobs->empty()) {
      continue;
    }
    const auto& j = jobs->front();
    if (!ours(vanished[i], j.name)) {
      continue;
    }
    JobView v;
    v.state = parse_job_state(j.state);
    v.reason = j.reason;
    v.nodes = text::is_null(j.nodes) ? std::string{} : j.nodes;
    v.source = "scontrol";
    v.elapsed_s = j.run_time_s;
    v.exit_status = j.exit_status;
    v.exit_signal = j.exit_signal;
    // A job that failed in its first second has RunTime=0 but had its nodes: it started.
    if (j.run_time_s > 0 || is_started(v.state) || (is_terminal(v.state) && !v.nodes.empty())) {
      v.start_epoch = now_epoch - j.run_time_s;
    }
    views[vanished[i]] = v;
  }
  if (outs.back().ok()) {
    if (auto rows = parse_sacct(outs.back().out, sacct_fields)) {
      std::set<std::string> from_controller;
      for (const auto& [id, v] : views) {
        from_controller.insert(id);
      }
      for (const auto& row : *rows) { // oldest first: a later record of the same id replaces an earlier one
        if (from_controller.count(row.job_id) ||
            std::find(vanished.begin(), vanished.end(), row.job_id) == vanished.end() || !ours(row.job_id, row.name)) {
          continue;
        }
        JobView v;
        v.state = parse_job_state(row.state);
        v.nodes = row.nodes;
        v.source = "sacct";
        v.elapsed_s = std::max<std::int64_t>(row.elapsed_s, 0);
        v.exit_status = row.exit_status;
        v.exit_signal = row.exit_signal;
        if (row.start_time) {
          v.start_epoch = now_epoch - std::max<std::int64_t>(row.elapsed_s, 0) - 1;
        }
        views[row.job_id] = v;
      }
    }
  }
  return views;
}

Result<JobView> final_state(proc::Runner& runner, Clock& clock, const std::string& job_id)
{
  Backoff backoff(Backoff::following());
  for (int attempt = 0; attempt < k_final_state_polls; ++attempt) {
    RV_TRY(views, look_up_gone(runner, {job_id}, 0));
    if (auto it = views.find(job_id); it != views.end() && is_terminal(it->second.state)) {
      return it->second;
    }
    clock.sleep_for(backoff.next());
  }
  return fail(ErrorCode::timeout,
              fmt::format("job {} ended but neither scontrol nor sacct has its final state", job_id),
              "check `sacct -j ID` on the cluster");
}

namespace {

// One poll of the race in one round trip: `lead` first (the pause's wait on the login node, which
// the claim ends early), then squeue, then `with` (the claim's read). The time for the views is
// taken once the batch is back: squeue ran at the wait's end.
Result<std::map<std::string, JobView>> poll_in_batch(proc::Runner& runner, Clock& clock,
                                                     const std::vector<std::string>& job_ids, int* controller_calls,
                                                     const std::map<std::string, std::string>& names,
                                                     const std::optional<proc::Command>& lead, proc::Outcome* lead_out,
                                                     const proc::Command& with, proc::Outcome* with_out)
{
  std::vector<proc::Command> batch;
  if (lead) {
    batch.push_back(*lead);
  }
  batch.push_back(patient_command(squeue_argv(job_ids)));
  batch.push_back(with);
  RV_TRY(outs, runner.run_batch(batch));
  if (outs.size() != batch.size()) {
    return fail(ErrorCode::parse, "unexpected reply to the poll");
  }
  if (lead && lead_out) {
    *lead_out = std::move(outs.front());
  }
  *with_out = std::move(outs.back());
  return views_from_squeue(runner, outs[outs.size() - 2], job_ids, clock.epoch_seconds(), controller_calls, names);
}

// Between two polls: a wait on the login node that a claim ends early (when the caller gave one
// and no claim was read yet: one there already would end it at once), else a sleep here
// (proc::remote::wait_or_sleep: a wait that cannot run sleeps the rest; an interrupt ends either).
// Returns whether the wait ended before its time: the claim file was written. (In claim mode the
// race runs its wait at the head of the next poll's batch instead: poll_in_batch.)
bool pause(proc::Runner& runner, Clock& clock, const MonitorOptions& options, bool unclaimed,
           std::chrono::milliseconds d)
{
  if (options.wait_for_claim && unclaimed) {
    const auto until = clock.now() + d;
    proc::remote::wait_or_sleep(runner, clock, options.wait_for_claim(d), until);
    return clock.now() < until && interrupt_signal() == 0;
  }
  clock.sleep_for(d);
  return false;
}

} // namespace

Result<RaceStats> run_race(proc::Runner& runner, Clock& clock, Race& race, const MonitorOptions& options)
{
  RaceStats stats;
  std::vector<std::string> ids;
  for (const auto& e : race.entries()) {
    ids.push_back(e.job_id);
  }
  const auto start = clock.now();
  Backoff backoff(options.poll);
  std::optional<std::chrono::steady_clock::time_point> first_unclaimed_start;
  bool claim_due = true; // read the claim with the next poll: the first (a job may have started), then see pause
  // The pause's wait on the login node, run first in the next poll's batch (claim mode): the
  // claim's appearance ends it and squeue and the claim are read at once, in the same round trip.
  std::optional<proc::Command> lead;
  std::chrono::steady_clock::time_point lead_until{};

  // Every exit that is not a win cancels whatever is still alive, and says so.
  auto abandon = [&](Error why) -> Result<RaceStats> {
    auto left = race.cancel_all();
    if (!left.empty()) {
      if (options.on_cancel) {
        options.on_cancel(left);
      }
      auto cancelled = cancel_jobs(runner, left, options.job_name);
      stats.controller_calls += 1;
      if (cancelled) {
        stats.cancelled.insert(stats.cancelled.end(), left.begin(), left.end());
        if (options.on_abandon_cancelled) {
          options.on_abandon_cancelled(left);
        }
        why.message += fmt::format("; cancelled {}", text::join(left, " "));
      } else {
        why.message += fmt::format("; could not cancel {}: {}", text::join(left, " "), cancelled.error().message);
      }
    }
    return std::unexpected(why);
  };

  while (true) {
    if (int sig = interrupt_signal(); sig != 0) {
      return abandon(Error{ErrorCode::interrupted, fmt::format("interrupted by signal {} during the race", sig), ""});
    }
    if (options.timeout.count() > 0 && clock.now() - start >= options.timeout) {
      return abandon(Error{ErrorCode::timeout, "no strategy started before the race timeout",
                           "raise the timeout, or see `rv up --dry-run` for the expected waits"});
    }
    std::map<std::string, std::string> names;
    for (const auto& id : ids) {
      names[id] = options.job_name;
    }
    const bool claim_mode = !options.claim_argv.empty();
    // A claim that is due is read in squeue's round trip (right after it, on the login node): a
    // start and its claim are seen together, not a round trip apart.
    std::optional<proc::Outcome> claim_read;
    if (claim_mode && (claim_due || lead)) {
      claim_read.emplace();
    }
    proc::Outcome lead_out;
    auto views = claim_read ? poll_in_batch(runner, clock, ids, &stats.controller_calls, names, lead, &lead_out,
                                            patient_command(options.claim_argv), &*claim_read)
                            : poll_jobs(runner, ids, clock.epoch_seconds(), &stats.controller_calls, names);
    const bool led = lead.has_value();
    lead.reset();
    if (!views && led && views.error().code != ErrorCode::interrupted) {
      // The batch with the wait could not run: as a wait alone that could not run, the rest of
      // the pause is slept here, then a poll of its own (whose failure ends the race).
      spdlog::debug("the wait on the login node could not run ({}): sleeping here", views.error().message);
      proc::remote::sleep_until(clock, lead_until);
      claim_due = false;
      continue;
    }
    if (!views) {
      if (views.error().code == ErrorCode::interrupted) {
        continue; // the loop head cancels everything
      }
      return abandon(views.error());
    }
    if (led && !lead_out.ok()) {
      // The wait could not run (proc::remote::wait_or_sleep's rule): the rest of the pause is
      // slept here, then this poll's answer counts.
      proc::remote::sleep_until(clock, lead_until);
    }
    ++stats.polls;
    std::string claimant;
    bool waiting_for_claim = false;
    const bool started = race.needs_claimant(*views, 1);
    // The claim counts once a sibling has started (or every one ended by a claim): read with the
    // poll when it was due, else now.
    if (claim_mode && (started || race.cancelled_by_a_claim(*views))) {
      if (!claim_read) {
        if (auto c = runner.run(patient_command(options.claim_argv)); c) {
          claim_read = std::move(*c);
        }
      }
      if (claim_read && claim_read->ok()) {
        claimant = claim_read->out.substr(0, claim_read->out.find_first_of(" \n"));
      }
      if (claimant.empty() && started) {
        // Started, not yet claimed: the guard is settling a tie or has not run yet.
        if (!first_unclaimed_start) {
          first_unclaimed_start = clock.now();
        }
        waiting_for_claim = clock.now() - *first_unclaimed_start < options.claim_wait;
      }
    }
    auto decision = race.observe(*views, claimant, !waiting_for_claim);
    if (!decision.adopted.empty()) {
      ids.push_back(decision.adopted); // polled from now on
    }
    if (!decision.cancel.empty()) {
      if (options.on_cancel) {
        options.on_cancel(decision.cancel);
      }
      // The winner's read (its node) rides in the scancel's round trip, after it.
      std::optional<proc::Command> read;
      if (race.winner() && options.winner_read) {
        read = options.winner_read(race.entries()[*race.winner()]);
      }
      if (read) {
        auto outs = runner.run_batch({cancel_command(decision.cancel, options.job_name), *read});
        if (!outs) {
          return abandon(outs.error());
        }
        if (outs->size() != 2) {
          return abandon(Error{ErrorCode::parse, "unexpected reply to scancel", ""});
        }
        if (auto r = cancel_outcome(outs->front(), decision.cancel, options.job_name); !r) {
          return abandon(r.error());
        }
        if (options.on_winner_read) {
          options.on_winner_read(outs->back());
        }
      } else if (auto r = cancel_jobs(runner, decision.cancel, options.job_name); !r) {
        return abandon(r.error());
      }
      stats.controller_calls += 1;
      stats.cancelled.insert(stats.cancelled.end(), decision.cancel.begin(), decision.cancel.end());
    }
    if (options.on_update) {
      options.on_update(race, decision);
    }
    if (race.winner()) {
      return stats;
    }
    if (decision.all_failed) {
      std::string why;
      for (const auto& e : race.entries()) {
        why +=
            fmt::format("{}{} ({}): {}", why.empty() ? "" : "; ", e.strategy_id, e.job_id,
                        e.hopeless_reason.empty() ? to_string(e.last.state) : "pending forever: " + e.hopeless_reason);
      }
      return fail(ErrorCode::slurm_rejected, "every strategy ended without starting: " + why,
                  "see each job's log with `rv logs`, or re-plan with `--dry-run`");
    }
    // The claim is due within seconds while a started sibling settles: look again soon. With a
    // wait on the login node, the wait leads the next poll's batch; without, the next poll reads
    // the claim in squeue's round trip when one is due (a sibling started unclaimed, or a wait
    // ended early because the claim was written).
    const auto d = waiting_for_claim ? options.poll.initial : backoff.next();
    if (claim_mode && options.wait_for_claim && claimant.empty()) {
      lead = options.wait_for_claim(d); // runs at the head of the next poll's round trip
      lead_until = clock.now() + d;
      continue;
    }
    claim_due = pause(runner, clock, options, claimant.empty(), d) || waiting_for_claim;
  }
}

} // namespace rv::slurm
