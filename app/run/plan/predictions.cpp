#include "app/run/plan/predictions.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"
#include "core/utc_time.hpp"
#include "slurm/cluster_time.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

namespace rv::app {
namespace {

// The records in `window` of `now`, newest first, at most window.last.
std::vector<const RequestRecord*> recent(const std::vector<RequestRecord>& records, std::int64_t now,
                                         const HistoryWindow& window)
{
  std::vector<const RequestRecord*> out;
  for (const auto& r : records) {
    const auto at = parse_utc_iso(r.created_at).value_or(0);
    if (at > 0 && now - at <= window.days * 86400) {
      out.push_back(&r);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const RequestRecord* a, const RequestRecord* b) {
    return parse_utc_iso(a->created_at).value_or(0) > parse_utc_iso(b->created_at).value_or(0);
  });
  if (out.size() > static_cast<std::size_t>(std::max(window.last, 0))) {
    out.resize(static_cast<std::size_t>(std::max(window.last, 0)));
  }
  return out;
}

// Slurm's estimate at submission of `j` as a wait: its first start estimate, when a poll saw it
// within k_slurm_estimate_window_s of the submission (a later one knows more than a plan could).
std::optional<std::int64_t> slurm_wait(const RequestRecord& r, const JobRecord& j)
{
  if (j.slurm_estimate.empty() || !r.utc_offset_s || j.slurm_estimate_at - j.submitted_at > k_slurm_estimate_window_s) {
    return std::nullopt;
  }
  auto t = slurm::parse_cluster_time(j.slurm_estimate);
  if (!t || !*t) {
    return std::nullopt;
  }
  return std::max<std::int64_t>(0, slurm::to_unix_seconds(**t, *r.utc_offset_s) - j.submitted_at);
}

std::vector<strategy::WaitSample> samples_of(const std::vector<const RequestRecord*>& records,
                                             const HistoryScope& scope)
{
  std::vector<strategy::WaitSample> out;
  for (const auto* r : records) {
    if (!scope.holds(*r)) {
      continue;
    }
    for (const auto& j : r->jobs) {
      if (!j.predicted_wait_s || j.submitted_at <= 0) {
        continue;
      }
      if (j.started_at > 0) {
        out.push_back({j.partition, *j.predicted_wait_s, std::max<std::int64_t>(0, j.started_at - j.submitted_at),
                       false, slurm_wait(*r, j), j.predicted_by});
      } else if (j.cancelled_pending_at > 0) {
        out.push_back({j.partition, *j.predicted_wait_s,
                       std::max<std::int64_t>(0, j.cancelled_pending_at - j.submitted_at), true, slurm_wait(*r, j),
                       j.predicted_by});
      }
    }
  }
  return out;
}

std::string signed_seconds(std::int64_t s)
{
  return fmt::format("{}{}", s < 0 ? "-" : "+", format_human_duration(std::llabs(s)));
}

} // namespace

bool HistoryScope::holds(const RequestRecord& r) const
{
  if (cluster.empty() && host.empty()) {
    return true;
  }
  return (!cluster.empty() && r.cluster == cluster) || (!host.empty() && r.cluster.empty() && r.host == host);
}

std::vector<strategy::WaitSample> wait_samples(const std::vector<RequestRecord>& records, const HistoryScope& scope,
                                               std::int64_t now, const HistoryWindow& window)
{
  return samples_of(recent(records, now, window), scope);
}

std::vector<strategy::PartitionBias> history_biases(const store::RecordStore& store, const HistoryScope& scope,
                                                    std::int64_t now, const HistoryWindow& window)
{
  auto docs = store.list();
  if (!docs) {
    spdlog::debug("history: cannot read the request records: {}", docs.error().message);
    return {};
  }
  std::vector<RequestRecord> records;
  for (const auto& d : *docs) {
    if (auto r = request_from_json(d)) {
      records.push_back(std::move(*r));
    }
  }
  return strategy::estimator_biases(wait_samples(records, scope, now, window));
}

nlohmann::json prediction_stats(const std::vector<RequestRecord>& records, std::int64_t now,
                                const HistoryWindow& window)
{
  const auto chosen = recent(records, now, window);
  // One group per cluster: its name, or the login node of a record without one.
  std::map<std::string, std::pair<HistoryScope, std::set<std::string>>> groups;
  for (const auto* r : chosen) {
    auto& [scope, logins] = groups[r->cluster.empty() ? r->host : r->cluster];
    scope = r->cluster.empty() ? HistoryScope{"", r->host} : HistoryScope{r->cluster, ""};
    logins.insert(r->host);
  }
  nlohmann::json host_list = nlohmann::json::array();
  for (const auto& [shown, group] : groups) {
    const auto& [scope, logins] = group;
    const auto samples = samples_of(chosen, scope);
    nlohmann::json parts = nlohmann::json::array();
    std::map<std::string, strategy::EstimateErrors> vs_slurm;
    for (auto& e : strategy::estimate_errors(samples)) {
      vs_slurm[e.partition] = e;
    }
    // What the planner corrects: per estimator, from its own samples (strategy::estimator_biases).
    std::map<std::string, std::vector<std::string>> corrected;
    for (const auto& b : strategy::estimator_biases(samples)) {
      if (b.systematic) {
        corrected[b.partition].push_back(fmt::format("{}'s estimates: {}", b.model, b.why));
      }
    }
    for (const auto& b : strategy::partition_biases(samples)) {
      const auto& e = vs_slurm[b.partition];
      const auto fix = corrected.find(b.partition);
      parts.push_back({{"partition", b.partition},
                       {"slurm_samples", e.slurm_samples},
                       {"slurm_median_abs_error_s", e.slurm_median_abs_s},
                       {"paired", e.paired},
                       {"rv_paired_median_abs_error_s", e.rv_paired_median_abs_s},
                       {"slurm_paired_median_abs_error_s", e.slurm_paired_median_abs_s},
                       {"started", b.started},
                       {"cancelled_pending", b.censored},
                       {"median_error_s", b.median_error_s},
                       {"median_abs_error_s", b.median_abs_error_s},
                       {"agreement", b.agreement},
                       {"corrected", fix != corrected.end()},
                       {"why", fix != corrected.end() ? text::join(fix->second, "; ") : b.why}});
    }
    host_list.push_back({{"host", shown},
                         {"logins", std::vector<std::string>(logins.begin(), logins.end())},
                         {"samples", samples.size()},
                         {"partitions", parts}});
  }
  return {
      {"window", {{"last", window.last}, {"days", window.days}}}, {"requests", chosen.size()}, {"hosts", host_list}};
}

std::string format_prediction_stats(const nlohmann::json& stats)
{
  std::string out = fmt::format("prediction history: {} requests (the newest {} of the last {} days)\n",
                                stats["requests"].get<std::size_t>(), stats["window"]["last"].get<int>(),
                                stats["window"]["days"].get<std::int64_t>());
  out += "error = actual wait - predicted wait (+: started later than predicted); cancelled = still pending when "
         "cancelled, counted only once past the prediction\n";
  for (const auto& h : stats["hosts"]) {
    const auto logins = h.value("logins", std::vector<std::string>{});
    const auto shown = h["host"].get<std::string>();
    out += fmt::format("\n{} ({} samples{})\n", shown, h["samples"].get<std::size_t>(),
                       logins.size() == 1 && logins.front() == shown ? "" : ", through " + text::join(logins, ", "));
    out += fmt::format("  {:<14} {:>7} {:>9} {:>12} {:>14}  {}\n", "partition", "started", "cancelled", "median error",
                       "median |error|", "ranking");
    for (const auto& p : h["partitions"]) {
      out += fmt::format("  {:<14} {:>7} {:>9} {:>12} {:>14}  {}\n", p["partition"].get<std::string>(),
                         p["started"].get<int>(), p["cancelled_pending"].get<int>(),
                         signed_seconds(p["median_error_s"].get<std::int64_t>()),
                         format_human_duration(p["median_abs_error_s"].get<std::int64_t>()),
                         (p["corrected"].get<bool>() ? "corrected: " : "as estimated: ") + p["why"].get<std::string>());
    }
    out += fmt::format("  {:<14} {:>7} {:>14} {:>14}  {}\n", "rv vs Slurm", "paired", "rv |error|", "Slurm |error|",
                       "Slurm alone");
    for (const auto& p : h["partitions"]) {
      const int paired = p["paired"].get<int>();
      out += fmt::format(
          "  {:<14} {:>7} {:>14} {:>14}  {} samples, median |error| {}\n", p["partition"].get<std::string>(), paired,
          paired ? format_human_duration(p["rv_paired_median_abs_error_s"].get<std::int64_t>()) : "-",
          paired ? format_human_duration(p["slurm_paired_median_abs_error_s"].get<std::int64_t>()) : "-",
          p["slurm_samples"].get<int>(),
          p["slurm_samples"].get<int>() > 0 ? format_human_duration(p["slurm_median_abs_error_s"].get<std::int64_t>())
                                            : "-");
    }
  }
  return out;
}

} // namespace rv::app
