#include "app/request/reap.hpp"

#include "core/process/remote_files.hpp"
#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"
#include "slurm/squeue.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

namespace rv::app {

bool request_finished(const RequestRecord& r)
{
  if (r.state == RequestState::submitting) {
    return false; // rv died mid-submission: jobs may exist that the record lacks
  }
  return std::all_of(r.jobs.begin(), r.jobs.end(),
                     [](const JobRecord& j) { return j.job_id.empty() || slurm::is_terminal(j.state); });
}

Result<std::vector<std::string>> adopt_orphans(proc::Runner& runner, RequestRecord& r)
{
  proc::Command c;
  c.argv = slurm::request_jobs_argv(r.name);
  RV_TRY(out, runner.run(c));
  RV_TRY(jobs, slurm::request_jobs(out.out, r.id));
  std::vector<std::string> added;
  for (const auto& j : jobs) {
    auto ids = r.job_ids();
    if (std::find(ids.begin(), ids.end(), j.job_id) != ids.end()) {
      continue;
    }
    JobRecord& orphan = r.jobs.emplace_back();
    orphan.strategy_id = orphan_strategy_id(r, j.job_id);
    orphan.label = "found by its comment rv:" + r.id + " after rv died or was interrupted";
    orphan.job_id = j.job_id;
    orphan.state = slurm::parse_job_state(j.state);
    added.push_back(j.job_id);
  }
  return added;
}

std::string orphan_strategy_id(const RequestRecord& rec, const std::string& job_id)
{
  const bool taken =
      std::any_of(rec.jobs.begin(), rec.jobs.end(), [](const JobRecord& j) { return j.strategy_id == "orphan"; });
  return taken ? "orphan-" + job_id : "orphan";
}

std::string settle_failed_submission(proc::Runner& runner, Clock& clock, store::RecordStore& store, RequestRecord& rec,
                                     RequestState final_state)
{
  rec.state = RequestState::submitting; // searchable by the next `rv ps` until this ends
  save(store, rec);
  std::vector<std::string> found;
  // An sbatch already running on the login node when the round trip was cut off still creates its
  // job after a first search (the remote script stops only at its next write): search again after
  // a settle gap, until a search finds nothing new (#15 campaign, seed 2511 run 43).
  for (int round = 0; round < k_settle_rounds; ++round) {
    if (round > 0) {
      clock.sleep_for(k_settle_gap);
    }
    auto added = adopt_orphans(runner, rec);
    if (!added) {
      return fmt::format("could not look for jobs it created ({}); `rv ps` looks again", added.error().message);
    }
    found.insert(found.end(), added->begin(), added->end());
    std::vector<std::string> live;
    for (const auto& j : rec.jobs) {
      if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
        live.push_back(j.job_id);
      }
    }
    if (!live.empty()) {
      if (auto c = slurm::cancel_jobs(runner, live, rec.name); !c) {
        rec.state = RequestState::submitted; // tracked: `rv ps` races them, `rv stop` cancels them
        save(store, rec);
        return fmt::format("jobs {} were created but could not be cancelled ({}); `rv stop {}` cancels them",
                           fmt::join(live, " "), c.error().message, rec.id);
      }
      for (auto& j : rec.jobs) {
        if (std::find(live.begin(), live.end(), j.job_id) != live.end()) {
          mark_cancelled(j, clock.epoch_seconds());
        }
      }
      save(store, rec);
    }
    if (round > 0 && added->empty()) {
      break; // quiet: nothing new since the last search
    }
  }
  rec.state = final_state;
  save(store, rec);
  if (found.empty()) {
    return "no job of it reached the queue";
  }
  return fmt::format("cancelled {} that sbatch had already created", fmt::join(found, " "));
}

Result<ReapReport> refresh_and_reap(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                                    std::vector<RequestRecord>& requests)
{
  ReapReport report;
  // Orphans: a request still "submitting" may have jobs sbatch created before rv died or was
  // interrupted; the user's own jobs with the request's name and comment are its jobs.
  for (auto& r : requests) {
    if (r.state != RequestState::submitting || store.submission_held(r.id)) {
      continue; // held: its rv is alive and submitting; the record is its own
    }
    // Unheld now, but the copy read earlier may be stale: its rv may have recorded the job ids and
    // let go since (#15 campaign, seed 1125 run 50: they were then adopted as orphans and cancelled).
    auto fresh = store.read(r.id);
    if (!fresh) {
      continue;
    }
    if (auto now = request_from_json(*fresh); now && now->state != RequestState::submitting) {
      r = std::move(*now);
      continue;
    }
    RV_TRY(found, adopt_orphans(runner, r));
    for (auto& id : found) {
      report.notes.push_back(fmt::format("request {}: found orphan job {} (rv died while submitting)", r.id, id));
      report.orphans.push_back(std::move(id));
    }
    // rv died before sbatch created anything: the request is over (recorded `submitted`, it had no
    // job yet never ended: `rv ps` listed it and `rv stop` called it ended; #15 campaign).
    r.state = r.job_ids().empty() ? RequestState::failed : RequestState::submitted;
    save(store, r);
  }

  std::vector<std::string> ids;
  for (const auto& r : requests) {
    if (!request_finished(r)) {
      for (const auto& j : r.jobs) {
        if (!j.job_id.empty() && !slurm::is_terminal(j.state)) {
          ids.push_back(j.job_id);
        }
      }
    }
  }
  auto cleanup = [&] {
    std::vector<RequestRecord*> all;
    for (auto& r : requests) {
      all.push_back(&r);
    }
    remove_secrets(runner, store, all);
  };
  if (ids.empty()) {
    cleanup();
    return report;
  }
  std::map<std::string, std::string> names; // a reused id is another job: not believed
  for (const auto& r : requests) {
    for (const auto& j : r.jobs) {
      if (!j.job_id.empty()) {
        names[j.job_id] = r.name;
      }
    }
  }
  RV_TRY(views, slurm::poll_jobs(runner, ids, clock.epoch_seconds(), nullptr, names));
  std::map<std::string, std::vector<std::string>> to_cancel; // by job name: scancel --name guards reused ids
  for (auto& r : requests) {
    bool changed = false;
    for (auto& j : r.jobs) {
      auto it = views.find(j.job_id);
      if (it == views.end() || it->second.source.empty()) {
        continue;
      }
      apply_polled(j, it->second, clock.epoch_seconds());
      changed = true;
    }
    // The winner: the one the record names, else the first (in rank order) that started, else
    // the one that ran the command and ended before any poll saw it running (a fast crash: its
    // outputs, logs and `*` in rv ps belong to it; UX review 3, N4).
    if (!r.study.is_null()) { // a study's workers are no race: none is a loser (docs/studies.md)
      if (changed) {
        save(store, r);
      }
      continue;
    }
    if (r.winner.empty()) {
      for (const auto& j : r.jobs) {
        if (slurm::is_started(j.state)) {
          r.winner = j.strategy_id;
          r.state = RequestState::won;
          changed = true;
          break;
        }
      }
    }
    if (r.winner.empty()) {
      if (const auto* ran = r.job_that_ran()) {
        r.winner = ran->strategy_id;
        r.state = RequestState::won;
        changed = true;
      }
    }
    if (!r.winner.empty()) {
      for (auto& j : r.jobs) {
        if (j.strategy_id != r.winner && !j.job_id.empty() && !slurm::is_terminal(j.state)) {
          to_cancel[r.name].push_back(j.job_id);
          report.notes.push_back(fmt::format("request {}: cancelling loser {} ({}) of winner {}", r.id, j.job_id,
                                             state_name(j), r.winner));
        }
      }
    }
    if (changed) {
      save(store, r);
    }
  }
  // A loser is recorded CANCELLED only once scancel ran: recorded before, a failed scancel (a
  // dropped connection) left it pending with a record that no later `rv ps` acts on (#15 campaign).
  for (const auto& [name, job_ids] : to_cancel) {
    if (auto c = slurm::cancel_jobs(runner, job_ids, name); !c) {
      return std::unexpected(c.error());
    }
    report.cancelled.insert(report.cancelled.end(), job_ids.begin(), job_ids.end());
  }
  for (auto& r : requests) {
    bool changed = false;
    for (auto& j : r.jobs) {
      if (!to_cancel.contains(r.name) || j.strategy_id == r.winner) {
        continue;
      }
      const auto& losers = to_cancel[r.name];
      if (std::find(losers.begin(), losers.end(), j.job_id) != losers.end()) {
        mark_cancelled(j, clock.epoch_seconds());
        changed = true;
      }
    }
    // A study's end is its tasks', read from the cluster (app/run/study_run.hpp): not decided here.
    if (request_finished(r) && !is_final_state(r.state) && r.study.is_null()) {
      const auto* w = r.winner_job();
      r.state = w ? ended_state(w->state) : RequestState::failed;
      if (!w && r.after.is_object() && r.after.contains("dependency") &&
          std::all_of(r.jobs.begin(), r.jobs.end(), [](const JobRecord& j) {
            return j.job_id.empty() || (j.state == slurm::JobState::cancelled && j.started_at == 0);
          })) {
        // rv run --after: Slurm cancelled every job (--kill-on-invalid-dep) because the request it
        // waited for did not end as needed (docs/taskfile.md, "Pipelines").
        const auto first = r.after.value("request", "?");
        r.state = RequestState::cancelled;
        r.after["cancelled"] = fmt::format("{} did not succeed, so --after {}:{} could never start", first, first,
                                           r.after.value("kind", "ok"));
        report.notes.push_back(
            fmt::format("request {} was cancelled: {}", r.id, r.after["cancelled"].get<std::string>()));
      }
      changed = true;
    }
    if (changed) {
      save(store, r);
    }
  }
  cleanup();
  return report;
}

void remove_secrets(proc::Runner& runner, store::RecordStore& store, std::vector<RequestRecord*> requests, bool force)
{
  std::erase_if(requests,
                [&](const RequestRecord* r) { return r->secrets_file.empty() || (!force && !request_finished(*r)); });
  if (requests.empty()) {
    return;
  }
  std::vector<std::string> files;
  for (const auto* r : requests) {
    files.push_back(r->secrets_file);
  }
  auto o = runner.run(proc::remote::remove_command(files)); // runs even while a Ctrl-C is pending
  if (!o || !o->ok()) {
    spdlog::warn("could not delete the secrets file(s) of finished request(s): {}", o ? o->err : o.error().message);
    return;
  }
  for (auto* r : requests) {
    r->secrets_file.clear();
    save(store, *r);
  }
}

} // namespace rv::app
