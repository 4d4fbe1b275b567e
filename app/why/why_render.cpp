// rv why, pure parts: the report as JSON (docs/why.md) and as text.

#include "app/why/why.hpp"

#include "core/duration.hpp"
#include "core/printable.hpp"
#include "strategy/plan.hpp"

#include <fmt/format.h>

namespace rv::app {
namespace {

nlohmann::json opt(const std::optional<std::int64_t>& v)
{
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const AheadJob& a)
{
  return {{"job_id", a.job_id},     {"user", a.user},           {"name", a.name},    {"gpus", a.gpus},
          {"priority", a.priority}, {"time", a.start_estimate}, {"reason", a.reason}};
}

nlohmann::json to_json(const Ahead& a)
{
  auto pending = nlohmann::json::array();
  for (const auto& p : a.pending) {
    pending.push_back(to_json(p));
  }
  return {{"partition", a.partition},
          {"gpu_type", a.gpu_type},
          {"gpus", a.gpus},
          {"pending_jobs", a.pending_jobs},
          {"pending_gpus", a.pending_gpus},
          {"pending", pending},
          {"running_jobs", a.running_jobs},
          {"running_gpus", a.running_gpus},
          {"first_end", a.first_end ? to_json(*a.first_end) : nlohmann::json(nullptr)}};
}

std::string gpus_text(int n, const std::string& type)
{
  return fmt::format("{} {}GPU{}", n, type.empty() ? "" : type + " ", n == 1 ? "" : "s");
}

// "1 higher-priority job needs 8 a6000 GPUs (240 blocker of rvtest, from 11:17:15)".
std::string ahead_text(const Ahead& a)
{
  std::string out;
  if (a.pending_jobs == 0) {
    out = "no eligible job of a higher priority waits for these GPUs";
  } else {
    out = fmt::format("{} higher-priority job{} need{} {}", a.pending_jobs, a.pending_jobs == 1 ? "" : "s",
                      a.pending_jobs == 1 ? "s" : "", gpus_text(a.pending_gpus, a.gpu_type));
    std::string first;
    for (const auto& p : a.pending) {
      first += fmt::format("{}{} {} of {}{}", first.empty() ? "" : ", ", p.job_id, p.name, p.user,
                           p.start_estimate.empty() ? "" : ", from " + p.start_estimate);
    }
    out += " (" + first + (a.pending_jobs > static_cast<int>(a.pending.size()) ? ", ..." : "") + ")";
  }
  if (a.running_jobs > 0) {
    out += fmt::format("; {} running job{} hold{} {}", a.running_jobs, a.running_jobs == 1 ? "" : "s",
                       a.running_jobs == 1 ? "s" : "", gpus_text(a.running_gpus, a.gpu_type));
    if (a.first_end) {
      out += fmt::format(", the first ends {} (job {}, {} GPU{})", a.first_end->start_estimate, a.first_end->job_id,
                         a.first_end->gpus, a.first_end->gpus == 1 ? "" : "s");
    }
  }
  return out;
}

} // namespace

nlohmann::json to_json(const WhyReport& r)
{
  auto jobs = nlohmann::json::array();
  for (const auto& j : r.jobs) {
    jobs.push_back({{"strategy", j.strategy_id},
                    {"job_id", j.job_id},
                    {"label", j.label},
                    {"state", j.state == slurm::JobState::unknown ? "" : slurm::to_string(j.state)},
                    {"reason",
                     {{"code", j.raw_reason},
                      {"name", j.reason.code},
                      {"detail", j.reason.detail},
                      {"text", j.reason.plain},
                      {"hint", j.reason.hint},
                      {"kind", slurm::to_string(j.reason.kind)},
                      {"hopeless", j.reason.hopeless},
                      {"known", j.reason.known}}},
                    {"start_estimate", j.start_estimate},
                    {"start_in_s", opt(j.start_in_s)},
                    {"nodes", j.nodes},
                    {"priority", j.priority},
                    {"dependency", j.dependency},
                    {"est_su", j.est_su},
                    {"ahead", j.ahead ? to_json(*j.ahead) : nlohmann::json(nullptr)}});
  }
  auto alternatives = nlohmann::json::array();
  for (const auto& a : r.alternatives) {
    alternatives.push_back({{"change", a.change},
                            {"flags", a.flags},
                            {"start_in_s", opt(a.strategy.est_wait_s)},
                            {"est_su", a.strategy.est_su},
                            {"strategy", strategy::to_json(a.strategy)}});
  }
  return {{"request", r.request_id},
          {"name", r.name},
          {"host", r.host},
          {"status", r.status},
          {"summary", r.summary},
          {"jobs", jobs},
          {"best_start", r.best_start},
          {"best_start_in_s", opt(r.best_start_in_s)},
          {"replanned", r.replanned},
          {"alternatives", alternatives},
          {"notes", r.notes},
          {"round_trips", r.round_trips},
          {"seconds", r.seconds}};
}

std::string render_why(const WhyReport& r)
{
  std::string out = printable(r.summary) + "\n";
  if (r.status != "pending") {
    return out;
  }
  for (const auto& j : r.jobs) {
    out += fmt::format("  {:<4} job {:<8} {}{}\n", printable(j.strategy_id), printable(j.job_id), printable(j.label),
                       j.est_su > 0 ? fmt::format(", {:.1f} SU", j.est_su) : "");
    if (!j.ahead && j.state != slurm::JobState::pending) {
      out += fmt::format("       {}{}\n",
                         (j.state == slurm::JobState::unknown ? "unknown to Slurm" : slurm::to_string(j.state)),
                         j.nodes.empty() ? "" : " on " + printable(j.nodes));
      continue;
    }
    out += fmt::format("       {}{}\n", printable(j.reason.plain),
                       j.reason.known && !j.raw_reason.empty() ? " (" + printable(j.raw_reason) + ")" : "");
    if (!j.dependency.empty()) {
      out += fmt::format("       depends on {}\n", printable(j.dependency));
    }
    if (!j.start_estimate.empty()) {
      out += fmt::format("       est. start {} ({}){}\n", printable(j.start_estimate),
                         wait_in_words(j.start_in_s.value_or(0)), // Slurm's estimate: "now" once it has come
                         j.nodes.empty() ? "" : ", planned on " + printable(j.nodes));
    } else {
      out += "       no start estimate from Slurm yet\n";
    }
    if (j.ahead) {
      out += fmt::format("       ahead of it: {}\n", printable(ahead_text(*j.ahead)));
    }
    if (!j.reason.hint.empty()) {
      out += fmt::format("       hint: {}\n", printable(j.reason.hint));
    }
  }
  if (!r.alternatives.empty()) {
    out += fmt::format("alternatives that would start sooner (they change the request: rv stop {}, then rv run with "
                       "the flags):\n",
                       printable(r.request_id));
    for (const auto& a : r.alternatives) {
      std::string flags;
      for (const auto& f : a.flags) {
        flags += (flags.empty() ? "" : " ") + f;
      }
      out += fmt::format("  {:<40} starts {:<9} SU {:>9.1f}  {}\n    {}\n", printable(a.strategy.label),
                         wait_in_words(a.strategy.est_wait_s, r.now_threshold_s), a.strategy.est_su,
                         flags.empty() ? "" : printable(flags), printable(a.change));
    }
  }
  for (const auto& n : r.notes) {
    out += "note: " + printable(n) + "\n";
  }
  return out;
}

} // namespace rv::app
