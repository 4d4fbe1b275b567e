#include "cli/reap.hpp"

#include "slurm/job_state.hpp"
#include "slurm/monitor.hpp"
#include "slurm/squeue.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

namespace rv::cli {

bool request_finished(const RequestRecord& r)
{
  if (r.state == "submitting") {
    return false; // rv died mid-submission: jobs may exist that the record lacks
  }
  return std::all_of(r.jobs.begin(), r.jobs.end(), [](const JobRecord& j) {
    return j.job_id.empty() || slurm::is_terminal(slurm::parse_job_state(j.state));
  });
}

Result<ReapReport> refresh_and_reap(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                                    std::vector<RequestRecord>& requests)
{
  ReapReport report;
  // Orphans: a request still "submitting" may have jobs sbatch created before rv died; they
  // carry the request's job name, so squeue finds them.
  for (auto& r : requests) {
    if (r.state != "submitting") {
      continue;
    }
    proc::Command c;
    c.argv = {"squeue", "-h", "-t", "all", "-n", r.name, "-o", "%i|%j"};
    RV_TRY(out, runner.run(c));
    std::string_view rest = out.out;
    while (!rest.empty()) {
      auto nl = rest.find('\n');
      auto line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      auto bar = line.find('|');
      if (bar == std::string_view::npos) {
        continue;
      }
      std::string id(line.substr(0, bar));
      auto ids = r.job_ids();
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        JobRecord& orphan = r.jobs.emplace_back();
        orphan.strategy_id = "orphan";
        orphan.label = "found by name after rv died";
        orphan.job_id = id;
        report.orphans.push_back(id);
        report.notes.push_back(fmt::format("request {}: found orphan job {} (rv died while submitting)", r.id, id));
      }
    }
    r.state = "submitted";
  }

  std::vector<std::string> ids;
  for (const auto& r : requests) {
    if (!request_finished(r)) {
      for (const auto& j : r.jobs) {
        if (!j.job_id.empty() && !slurm::is_terminal(slurm::parse_job_state(j.state))) {
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
  RV_TRY(views, slurm::poll_jobs(runner, ids, clock.epoch_seconds()));
  std::vector<std::string> to_cancel;
  for (auto& r : requests) {
    bool changed = false;
    for (auto& j : r.jobs) {
      auto it = views.find(j.job_id);
      if (it == views.end() || it->second.source.empty()) {
        continue;
      }
      apply_view(j, it->second);
      changed = true;
    }
    // The winner: the one the record names, else the first (in rank order) that started.
    if (r.winner.empty()) {
      for (const auto& j : r.jobs) {
        if (slurm::is_started(slurm::parse_job_state(j.state))) {
          r.winner = j.strategy_id;
          r.state = "won";
          changed = true;
          break;
        }
      }
    }
    if (!r.winner.empty()) {
      for (auto& j : r.jobs) {
        if (j.strategy_id != r.winner && !j.job_id.empty() && !slurm::is_terminal(slurm::parse_job_state(j.state))) {
          to_cancel.push_back(j.job_id);
          report.notes.push_back(fmt::format("request {}: cancelling loser {} ({}) of winner {}", r.id, j.job_id,
                                             j.state, r.winner));
          j.state = "CANCELLED";
          changed = true;
        }
      }
    }
    if (request_finished(r) && r.state != "done" && r.state != "failed" && r.state != "cancelled") {
      r.state = r.winner.empty() ? "failed" : "done";
      changed = true;
    }
    if (changed) {
      auto doc = to_json(r);
      (void)store.update(r.id, [&](nlohmann::json& rec) { rec = doc; });
    }
  }
  if (!to_cancel.empty()) {
    if (auto c = slurm::cancel_jobs(runner, to_cancel); !c) {
      return std::unexpected(c.error());
    }
    report.cancelled = to_cancel;
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
  proc::Command c;
  c.argv = {"rm", "-f", "--"};
  for (const auto* r : requests) {
    c.argv.push_back(r->secrets_file);
  }
  c.timeout = std::chrono::seconds(30);
  auto o = runner.run(c);
  if (!o || !o->ok()) {
    spdlog::warn("could not delete the secrets file(s) of finished request(s): {}",
                 o ? o->err : o.error().message);
    return;
  }
  for (auto* r : requests) {
    r->secrets_file.clear();
    auto doc = to_json(*r);
    (void)store.update(r->id, [&](nlohmann::json& rec) { rec = doc; });
  }
}

} // namespace rv::cli
