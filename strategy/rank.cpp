#include "strategy/rank.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

namespace rv::strategy {
namespace {

std::int64_t wait_key(const model::Strategy& s, std::int64_t resolution_s = 1)
{
  return s.est_wait_s ? std::max<std::int64_t>(0, *s.est_wait_s) / std::max<std::int64_t>(1, resolution_s)
                      : std::numeric_limits<std::int64_t>::max();
}

// The probes and the queue model disagree about these two: neither prunes the other.
bool other_view(const model::Strategy& a, const model::Strategy& b)
{
  using model::WindowSource;
  return (a.window_source == WindowSource::probe && b.window_source == WindowSource::queue) ||
         (a.window_source == WindowSource::queue && b.window_source == WindowSource::probe);
}

bool same_group(const model::Strategy& a, const model::Strategy& b)
{
  bool ca = a.kind == model::StrategyKind::checkpoint;
  bool cb = b.kind == model::StrategyKind::checkpoint;
  return a.gpu_type == b.gpu_type && a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node && ca == cb;
}

} // namespace

int fanout_width(const model::Cluster& cluster, const PlanOptions& opts, std::vector<std::string>& notes)
{
  int width = std::max(1, opts.max_width);
  if (cluster.limits.max_submit_jobs && *cluster.limits.max_submit_jobs > 0 &&
      *cluster.limits.max_submit_jobs < width) {
    width = *cluster.limits.max_submit_jobs;
    notes.push_back(fmt::format("fan-out capped at {} by MaxSubmitJobs", width));
  }
  if (cluster.config.bf_max_job_user > 0 && cluster.config.bf_max_job_user < width) {
    width = cluster.config.bf_max_job_user;
    notes.push_back(fmt::format("fan-out capped at {} by bf_max_job_user (more would compete for backfill)", width));
  }
  return width;
}

bool ranks_before(const model::Strategy& a, const model::Strategy& b, std::int64_t resolution_s)
{
  return std::make_tuple(wait_key(a, resolution_s), a.est_su, static_cast<int>(a.kind), a.nodes, a.gpu_type,
                         a.partition, a.walltime_s) < std::make_tuple(wait_key(b, resolution_s), b.est_su,
                                                                      static_cast<int>(b.kind), b.nodes, b.gpu_type,
                                                                      b.partition, b.walltime_s);
}

std::string make_label(const model::Strategy& s)
{
  std::string shape =
      s.nodes > 1 ? fmt::format("{}x{}", s.nodes, s.gpus_per_node) : fmt::format("{}x", s.gpus_per_node);
  std::string type = s.gpu_type.empty() ? "gpu" : s.gpu_type;
  std::string when;
  switch (s.kind) {
  case model::StrategyKind::checkpoint:
    when = fmt::format("{}x{}", s.segments, format_human_duration(s.walltime_s));
    break;
  case model::StrategyKind::time_min:
    when = fmt::format("{} (min {})", format_human_duration(s.walltime_s), format_human_duration(s.time_min_s));
    break;
  default:
    when = format_human_duration(s.walltime_s);
  }
  std::string extra = s.free ? " free" : "";
  return fmt::format("{} {} {} {} on {}{}", shape, type, model::to_string(s.kind), when, s.partition, extra);
}

Ranked rank_strategies(std::vector<model::Strategy> strategies, int width, std::int64_t resolution_s)
{
  std::stable_sort(strategies.begin(), strategies.end(),
                   [&](const auto& a, const auto& b) { return ranks_before(a, b, resolution_s); });
  Ranked out;
  for (auto& s : strategies) {
    auto dom = std::find_if(out.kept.begin(), out.kept.end(), [&](const auto& k) {
      return same_group(k, s) && !other_view(k, s) && wait_key(k, resolution_s) <= wait_key(s, resolution_s) &&
             k.est_su <= s.est_su;
    });
    if (dom != out.kept.end()) {
      auto reason =
          fmt::format("dominated by {} ({}): waits no longer and costs no more", make_label(*dom), dom->partition);
      s.label = make_label(s);
      out.pruned.push_back({std::move(s), std::move(reason)});
      continue;
    }
    out.kept.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < out.kept.size(); ++i) {
    out.kept[i].label = make_label(out.kept[i]);
  }
  for (std::size_t i = static_cast<std::size_t>(width); i < out.kept.size(); ++i) {
    out.pruned.push_back({std::move(out.kept[i]), fmt::format("beyond the fan-out width of {}", width)});
  }
  out.kept.resize(std::min(out.kept.size(), static_cast<std::size_t>(width)));
  for (std::size_t i = 0; i < out.kept.size(); ++i) {
    out.kept[i].id = fmt::format("s{}", i + 1);
  }
  return out;
}

} // namespace rv::strategy
