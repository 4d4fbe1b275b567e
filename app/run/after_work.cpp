#include "app/run/after_work.hpp"

#include "app/request/requests.hpp"
#include "app/run/plan/assoc_cache.hpp"
#include "slurm/monitor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace rv::app {

Result<int> record_slurm_estimates(Env& env, const std::vector<std::string>& request_ids)
{
  std::vector<RequestRecord> records;
  std::vector<std::string> ids;
  std::map<std::string, std::string> names;
  for (const auto& id : request_ids) {
    auto doc = env.requests.read(id);
    auto rec = doc ? request_from_json(*doc) : Result<RequestRecord>(std::unexpected(doc.error()));
    if (!rec) {
      spdlog::debug("estimates: request {}: {}", id, rec.error().message);
      continue;
    }
    for (const auto& j : rec->jobs) {
      const bool pending = j.state == slurm::JobState::unknown || j.state == slurm::JobState::pending;
      if (!j.job_id.empty() && pending && j.started_at == 0 && j.cancelled_pending_at == 0 &&
          j.slurm_estimate.empty()) {
        ids.push_back(j.job_id);
        names[j.job_id] = rec->name;
      }
    }
    records.push_back(std::move(*rec));
  }
  if (ids.empty()) {
    return 0;
  }
  RV_TRY(views, slurm::poll_jobs(env.cluster, ids, env.clock.epoch_seconds(), nullptr, names));
  int recorded = 0;
  for (auto& rec : records) {
    bool changed = false;
    for (auto& j : rec.jobs) {
      auto it = views.find(j.job_id);
      if (it == views.end() || it->second.source.empty()) {
        continue;
      }
      const bool had = !j.slurm_estimate.empty();
      apply_polled(j, it->second, env.clock.epoch_seconds());
      recorded += !had && !j.slurm_estimate.empty() ? 1 : 0;
      changed = true;
    }
    if (changed) {
      save(env.requests, rec);
    }
  }
  spdlog::debug("estimates: Slurm's start estimate recorded for {} of {} pending jobs", recorded, ids.size());
  return recorded;
}

bool has_after_work(const AfterWork& work)
{
  return work.refresh_assoc || !work.requests.empty();
}

int run_after_work(Env& env, const AfterWork& work)
{
  if (work.refresh_assoc) {
    if (auto r = refresh_assoc(env); !r) {
      spdlog::warn("after-work: cannot read the association facts: {}", r.error().message);
    }
  }
  int recorded = 0;
  for (int pass = 0; pass < 2 && !work.requests.empty(); ++pass) {
    env.clock.sleep_for(std::chrono::seconds(std::clamp<std::int64_t>(work.bf_interval_s, 1, 60) + 1));
    auto got = record_slurm_estimates(env, work.requests);
    if (!got) {
      spdlog::warn("after-work: cannot read Slurm's start estimates: {}", got.error().message);
      break;
    }
    recorded += *got;
    if (*got > 0) {
      break; // else Slurm's backfill may not have passed yet: one more interval
    }
  }
  return recorded;
}

} // namespace rv::app
