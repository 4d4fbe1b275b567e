#include "app/manage/manage.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/run/follow.hpp"
#include "app/run/live_status.hpp"
#include "core/interrupt.hpp"
#include "core/process/remote_files.hpp"
#include "slurm/backoff.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
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
  const auto here = current_host(env);
  for (const auto& r : targets) {
    if (!request_finished(r)) {
      RV_TRY_VOID(require_same_host(r, here)); // nothing is cancelled on the wrong cluster
    }
  }
  for (auto& r : targets) {
    if (!same_host(r, here)) {
      outcomes.push_back({r.id, {}, std::string(to_string(r.state))}); // ended, on another host: nothing to do here
      continue;
    }
    StopOutcome o{r.id, {}, {}};
    for (auto& j : r.jobs) {
      if (!j.job_id.empty() && !slurm::is_terminal(slurm::parse_job_state(j.state))) {
        o.cancelled.push_back(j.job_id); // a job rv knows has ended is not cancelled again: its id may be reused
      }
    }
    if (o.cancelled.empty()) {
      const auto* w = r.winner_job();
      o.ended = w && !w->state.empty() ? w->state : std::string(to_string(r.state));
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
  return outcomes;
}

Result<int> show_logs(Env& env, const LogsRequest& req)
{
  RequestRecord r;
  if (req.key.empty()) {
    RV_TRY(requests, load_requests(env.requests));
    if (requests.empty()) {
      return fail(ErrorCode::usage, "no requests yet", "rv run ... first");
    }
    r = requests.back();
  } else {
    RV_TRY(found, find_request(env.requests, req.key));
    r = std::move(found);
  }
  RV_TRY_VOID(require_same_host(r, current_host(env)));
  const JobRecord* job = nullptr;
  auto pick = [&] {
    job = r.winner_job();
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
      return fail(ErrorCode::interrupted, fmt::format("stopped waiting for request {} to start", r.id));
    }
    env.clock.sleep_for(backoff.next());
  }
  auto path = log_path(r, *job, req.err);
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
  auto c = req.tail >= 0 ? proc::remote::last_lines_command(path, req.tail) : proc::remote::read_command(path);
  c.on_stdout = [&](std::string_view s) { job_output.log_text(s, req.err); };
  RV_TRY(o, env.cluster.run(c));
  if (!o.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot read {} on {}: {}", path, env.cluster.where(), o.err),
                "the log appears once the job starts");
  }
  return 0;
}

} // namespace rv::app
