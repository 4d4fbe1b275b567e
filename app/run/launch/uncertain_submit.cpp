#include "app/run/launch/uncertain_submit.hpp"

#include "app/request/reap.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>

namespace rv::app {

Result<std::string> track_uncertain_submissions(proc::Runner& runner, Clock& clock, RequestRecord& rec,
                                                const std::vector<std::size_t>& uncertain)
{
  const auto before = rec.jobs.size();
  for (int round = 0; round < k_settle_rounds; ++round) {
    if (round > 0) {
      clock.sleep_for(k_settle_gap);
    }
    RV_TRY(added, adopt_orphans(runner, rec));
    if (round > 0 && added.empty()) {
      break; // quiet: nothing new since the last search
    }
  }
  std::vector<JobRecord> found(rec.jobs.begin() + static_cast<std::ptrdiff_t>(before), rec.jobs.end());
  if (found.empty()) {
    return std::string();
  }
  std::vector<std::string> ids;
  for (const auto& j : found) {
    ids.push_back(j.job_id);
  }
  if (found.size() == uncertain.size()) {
    rec.jobs.resize(before);
    std::sort(found.begin(), found.end(), [](const JobRecord& a, const JobRecord& b) {
      return a.job_id.size() != b.job_id.size() ? a.job_id.size() < b.job_id.size() : a.job_id < b.job_id;
    });
    for (std::size_t k = 0; k < found.size(); ++k) {
      auto& slot = rec.jobs[uncertain[k]];
      slot.job_id = found[k].job_id;
      slot.state = found[k].state == slurm::JobState::unknown ? slurm::JobState::pending : found[k].state;
      slot.error.clear();
      slot.submitted_at = clock.epoch_seconds();
    }
  } else {
    for (auto i = before; i < rec.jobs.size(); ++i) {
      rec.jobs[i].submitted_at = clock.epoch_seconds();
      rec.jobs[i].label = "found by its comment rv:" + rec.id + " after sbatch's answer was lost";
    }
  }
  return fmt::format("sbatch gave no usable answer for {} of the strategies, but found job{} {} by the request's "
                     "comment: tracked",
                     uncertain.size(), ids.size() == 1 ? "" : "s", fmt::join(ids, " "));
}

Result<void> settle_uncertain_submissions(proc::Runner& runner, Clock& clock, store::RecordStore& store,
                                          RequestRecord& rec, const std::vector<std::size_t>& uncertain)
{
  if (rec.job_ids().empty()) {
    auto settled = settle_failed_submission(runner, clock, store, rec, RequestState::failed);
    return fail(ErrorCode::slurm_rejected,
                fmt::format("sbatch gave no usable answer for request {} ({}): {}", rec.id,
                            rec.jobs[uncertain.front()].error, settled),
                "the Slurm controller may be overloaded; try again in a minute");
  }
  auto tracked = track_uncertain_submissions(runner, clock, rec, uncertain);
  if (!tracked) {
    spdlog::warn("request {}: sbatch gave no usable answer for {} strategies and rv could not look for their jobs "
                 "({}); a job of them that claims the request is adopted by the race",
                 rec.id, uncertain.size(), tracked.error().message);
  } else if (!tracked->empty()) {
    spdlog::warn("request {}: {}", rec.id, *tracked);
  }
  save(store, rec);
  return {};
}

} // namespace rv::app
