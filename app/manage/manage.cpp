#include "app/manage/manage.hpp"

#include "app/run/after.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/show/follow.hpp"
#include "app/run/show/live_status.hpp"
#include "app/run/study_across.hpp"
#include "app/run/study_run.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "core/text.hpp"
#include "slurm/backoff.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <optional>
#include <set>
#include <spdlog/spdlog.h>

namespace rv::app {

Result<std::vector<RequestRecord>> stop_targets(Env& env, const std::string& key, bool all)
{
  std::vector<RequestRecord> targets;
  if (all) {
    RV_TRY(requests, load_requests(env.requests));
    for (auto& r : requests) {
      if (!request_finished(r)) {
        targets.push_back(std::move(r));
      }
    }
    return targets;
  }
  if (key.empty()) {
    return fail(ErrorCode::usage, "rv stop needs a request id, job id or name", "rv stop 3f9c02ab, or --all --yes");
  }
  RV_TRY(r, find_request(env.requests, key));
  targets.push_back(std::move(r));
  return targets;
}

Result<std::vector<StopOutcome>> stop_requests(Env& env, std::vector<RequestRecord>& targets)
{
  std::vector<StopOutcome> outcomes;
  std::vector<RequestRecord*> with_secrets;
  // A study across clusters stops on every cluster, under its coordinator's lock (app/run/study_across.hpp).
  std::set<std::string> studies_stopped;
  for (auto it = targets.begin(); it != targets.end();) {
    if (!is_study_across(*it) || request_finished(*it)) {
      ++it;
      continue;
    }
    if (studies_stopped.insert(study_coordinator(*it)).second) {
      RV_TRY(stopped, stop_study_across(env, *it));
      for (auto& [id, jobs] : stopped) {
        const std::string ended = jobs.empty() ? "stopped" : "";
        outcomes.push_back({id, std::move(jobs), ended, {}});
      }
    }
    it = targets.erase(it);
  }
  // A request raced across clusters stops on every cluster: each member on its own.
  for (auto it = targets.begin(); it != targets.end();) {
    if (race_group(*it).empty() || request_finished(*it)) {
      ++it;
      continue;
    }
    RV_TRY(members, load_race_members(env, *it));
    for (auto& m : members) {
      if (request_finished(m.rec)) {
        continue;
      }
      StopOutcome o{m.rec.id, {}, {}, {}};
      for (const auto& j : m.rec.jobs) {
        if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
          o.cancelled.push_back(j.job_id);
        }
      }
      RV_TRY_VOID(stop_member(*m.env, m.rec));
      m.rec.state = RequestState::cancelled;
      save(env.requests, m.rec);
      outcomes.push_back(std::move(o));
    }
    it = targets.erase(it);
  }
  const auto here = current_host(env);
  for (const auto& r : targets) {
    if (!request_finished(r)) {
      RV_TRY_VOID(require_same_host(r, here)); // nothing is cancelled on the wrong cluster
    }
  }
  for (auto& r : targets) {
    if (!same_host(r, here)) {
      outcomes.push_back({r.id, {}, std::string(to_string(r.state)), {}}); // ended, on another host: nothing to do here
      continue;
    }
    // A study: wait for a top-up in progress (study_run.cpp holds the same lock from its check to its
    // save) and read the record again, so the workers it added are cancelled too.
    std::optional<store::FileLock> changing;
    if (!r.study.is_null()) {
      RV_TRY(held, env.requests.hold_changes(r.id));
      changing.emplace(std::move(held));
      if (auto stored = env.requests.read(r.id); stored) {
        if (auto fresh = request_from_json(*stored); fresh) {
          r = std::move(*fresh);
        }
      }
    }
    StopOutcome o{r.id, {}, {}, {}};
    for (auto& j : r.jobs) {
      if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
        o.cancelled.push_back(j.job_id); // a job rv knows has ended is not cancelled again: its id may be reused
      }
    }
    if (o.cancelled.empty() && !r.study.is_null() && !is_final_state(r.state)) {
      r.state = RequestState::cancelled; // a study between workers: no top-up may follow (docs/studies.md)
      save(env.requests, r);
      o.ended = "stopped";
    } else if (o.cancelled.empty()) {
      const auto* w = r.winner_job();
      o.ended = w && w->state != slurm::JobState::unknown ? state_name(*w) : std::string(to_string(r.state));
    } else {
      RV_TRY_VOID(slurm::cancel_jobs(env.cluster, o.cancelled, r.name));
      for (auto& j : r.jobs) {
        if (std::find(o.cancelled.begin(), o.cancelled.end(), j.job_id) != o.cancelled.end()) {
          mark_cancelled(j, env.clock.epoch_seconds());
        }
      }
      r.state = RequestState::cancelled;
      save(env.requests, r);
    }
    if (!r.secrets_file.empty()) {
      with_secrets.push_back(&r);
    }
    outcomes.push_back(std::move(o));
  }
  remove_secrets(env.cluster, env.requests, with_secrets, true);
  // What waited for a stopped request's success can never start: stop it too, saying why.
  std::vector<std::string> stopped;
  for (const auto& o : outcomes) {
    if (!o.cancelled.empty()) {
      stopped.push_back(o.id);
    }
  }
  if (stopped.empty()) {
    return outcomes;
  }
  RV_TRY(all, load_requests(env.requests));
  for (const auto& id : stopped) {
    std::vector<RequestRecord> waiting;
    for (auto& d : dependents_of(all, id)) {
      if (d.after.value("kind", "ok") == "ok" && same_host(d, here)) {
        waiting.push_back(std::move(d));
      }
    }
    if (waiting.empty()) {
      continue;
    }
    RV_TRY(more, stop_requests(env, waiting));
    for (auto& m : more) {
      if (m.because.empty()) {
        m.because = fmt::format("it ran --after {}:ok, and {} was stopped, so it could never start", id, id);
      }
      outcomes.push_back(std::move(m));
    }
  }
  return outcomes;
}

namespace {

constexpr int k_failure_lines = 20; // of a failed job's stderr, shown before its stdout

} // namespace

Result<int> show_logs(Env& env, const LogsRequest& req)
{
  if (auto task = study::split_task_key(req.key); task && find_request(env.requests, task->first)) {
    // `rv logs REQ/7` (or REQ:7): a study's task (docs/studies.md)
    RV_TRY(named, requests_for_key(env, task->first, Unnamed::newest));
    auto& found = named.front();
    if (found.study.is_null()) {
      return fail(ErrorCode::usage, fmt::format("request {} is not a study: it has no task {}", found.id, task->second),
                  fmt::format("rv logs {}", found.id));
    }
    if (is_study_across(found)) { // the task's log is on the cluster of its latest attempt
      return show_task_log_across(env, found, task->second, req.follow, req.tail);
    }
    return show_task_log(env, found, task->second, req.follow, req.tail);
  }
  RV_TRY(named, requests_for_key(env, req.key, Unnamed::newest));
  if (named.empty()) {
    return fail(ErrorCode::usage, "no requests yet", "rv run ... first");
  }
  RequestRecord r = std::move(named.front());
  const bool worker_named = std::any_of(r.jobs.begin(), r.jobs.end(), [&](const JobRecord& j) {
    return !j.job_id.empty() && j.job_id == req.key; // a study's worker by its job id: its own log
  });
  if (!r.study.is_null() && !worker_named) {
    return fail(ErrorCode::usage, fmt::format("request {} is a study: each task has its own log", r.id),
                fmt::format("rv logs {}/7 is task 7's; rv ps {} lists the tasks", r.id, r.id));
  }
  const JobRecord* job = nullptr;
  auto pick = [&] {
    job = r.winner_job();
    if (job == nullptr) {
      job = r.job_that_ran(); // a job that failed before any poll saw it running is named no winner
    }
    for (const auto& j : r.jobs) {
      if (!req.key.empty() && j.job_id == req.key) {
        job = &j;
      }
    }
  };
  pick();
  // `rv run` returns before the race is decided: refresh (and reap) until a sibling has started,
  // waiting for it with -f (the live status shows each refresh).
  LiveStatus live(env, true);
  slurm::Backoff backoff(slurm::Backoff::waiting());
  while (!job) {
    std::vector<RequestRecord> one = {r};
    RV_TRY(report, refresh_and_reap(env.cluster, env.clock, env.requests, one));
    for (const auto& n : report.notes) {
      spdlog::info("{}", n);
    }
    r = std::move(one.front());
    pick();
    if (job) {
      break;
    }
    if (req.follow) {
      live.jobs(r);
    }
    if (!req.follow || request_finished(r)) {
      return fail(
          ErrorCode::usage,
          fmt::format("no job of request {} has started{}", r.id, request_finished(r) ? " (it has ended)" : " yet"),
          request_finished(r) ? "rv ps -a shows what happened to its jobs" : "rv logs -f waits for it");
    }
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("stopped waiting; request {} is still pending", r.id),
                  fmt::format("`rv logs -f {}` waits again, `rv stop {}` cancels its jobs", r.id, r.id));
    }
    env.clock.sleep_for(backoff.next());
  }
  auto path = log_path(r, *job, req.err);
  if (req.node >= 0 && req.node >= job->nodes) {
    return fail(ErrorCode::usage,
                fmt::format("--node {}: job {} ran on {} node{}{}", req.node, job->job_id, job->nodes,
                            job->nodes == 1 ? "" : "s", job->node_list.empty() ? "" : " (" + job->node_list + ")"),
                job->nodes == 1 ? fmt::format("a one-node job has one log: rv logs {}", r.id)
                                : fmt::format("give --node 0 to {}", job->nodes - 1));
  }
  if (req.node >= 0) {
    path = fmt::format("{}/{}-{}.node{}.{}", r.log_dir, r.name, job->job_id, req.node, req.err ? "err" : "out");
  }
  live.clear();
  std::string node = job->node_list; // per-node log K: the K-th host of the allocation
  if (auto hosts = slurm::expand_hostlist(job->node_list);
      req.node >= 0 && hosts && req.node < static_cast<int>(hosts->size())) {
    node = (*hosts)[static_cast<std::size_t>(req.node)];
  }
  JobOutput job_output(env, live, r.id, job->job_id, node);
  if (req.follow && req.node < 0) {
    auto status = follow_job(env.cluster, env.clock, job_output, r, *job, 0, 0,
                             [&](const std::string& prev, const std::string& next) {
                               record_next_segment(env.requests, r, prev, next);
                               job_output.set_job(next);
                             });
    job_output.flush();
    if (!status) {
      return std::unexpected(status.error());
    }
    const int code = exit_code_of(*status, status->job_id);
    live.event(ended_event(r.id, *status, code));
    return code;
  }
  // A failed job's logs lead with the failure: the end of its stderr (#24 item 7).
  const auto state = job->state;
  if (!req.err && req.node < 0 && slurm::is_terminal(state) && state != slurm::JobState::completed) {
    auto tail = proc::remote::last_lines_command(log_path(r, *job, true), k_failure_lines);
    tail.on_stdout = [&](std::string_view s) { job_output.err(s); };
    if (!env.json) { // rv's own words; the lines themselves are the job's (events with --json)
      env.output.err(fmt::format("rv: job {} ended {}; the end of its stderr (rv logs --err {} has all of it):\n",
                                 job->job_id, state_name(*job), r.id));
    }
    RV_TRY(read, env.cluster.run(tail));
    (void)read; // a missing .err log shows as nothing
    job_output.flush();
    if (!env.json) {
      env.output.err("rv: its stdout:\n");
    }
  }
  const auto cannot_read = [&](const std::string& err) {
    const bool missing = err.find("No such file") != std::string::npos;
    return fail(ErrorCode::io,
                fmt::format("cannot read {} on {}: {}", path, env.cluster.where(),
                            missing ? "no such file" : text::shorten(text::trim(err), 200)),
                slurm::is_terminal(state) ? "the job ended without writing it; rv ps -a shows what happened"
                                          : "the log appears once the job starts");
  };
  if (req.tail >= 0) {
    auto c = proc::remote::last_lines_command(path, req.tail);
    c.on_stdout = [&](std::string_view s) { job_output.log_text(s, req.err); };
    RV_TRY(o, env.cluster.run(c));
    if (!o.ok()) {
      return cannot_read(o.err);
    }
    return 0;
  }
  // The whole log, a chunk at a time (#17): rv holds at most one chunk of a multi-GB log.
  for (std::size_t offset = 0;;) {
    RV_TRY(o, env.cluster.run(proc::remote::read_from_command(path, offset)));
    if (!o.ok()) {
      return cannot_read(o.err);
    }
    job_output.log_text(o.out, req.err);
    offset += o.out.size();
    if (o.out.size() < proc::remote::k_log_chunk || interrupt_signal() != 0) {
      return 0;
    }
  }
}

} // namespace rv::app
