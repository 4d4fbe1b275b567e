#include "strategy/early_end.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"
#include "strategy/window_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace rv::strategy {
namespace {

constexpr std::int64_t forever = std::numeric_limits<std::int64_t>::max() / 4;

const model::EndRatios* ratios_of(const model::Cluster& cluster, const std::string& partition)
{
  auto it = cluster.end_ratios.find(partition);
  return it != cluster.end_ratios.end() && it->second.jobs >= k_min_end_jobs ? &it->second : nullptr;
}

// Free GPUs of the candidate's type on one node over time: `now` plus the changes at each moment.
struct Timeline {
  int now = 0;
  std::map<std::int64_t, int> changes;

  void add(std::int64_t at, int delta)
  {
    if (at < forever) {
      changes[std::max<std::int64_t>(0, at)] += delta;
    }
  }
  // The fewest free GPUs in [from, from + length).
  int least(std::int64_t from, std::int64_t length) const
  {
    int free = now;
    auto it = changes.begin();
    for (; it != changes.end() && it->first <= from; ++it) {
      free += it->second;
    }
    int least = free;
    for (; it != changes.end() && it->first < from + length; ++it) {
      free += it->second;
      least = std::min(least, free);
    }
    return least;
  }
};

// The expected end of a job that started at `start_in_s` with limit end `end_in_s` (seconds from
// the snapshot): where jobs like it ended, else its limit.
std::int64_t expected_end(const model::EndRatios* r, std::int64_t start_in_s, std::int64_t end_in_s)
{
  const auto limit = end_in_s - start_in_s;
  if (r == nullptr || limit <= 0) {
    return end_in_s;
  }
  const double used = std::clamp(static_cast<double>(-start_in_s) / static_cast<double>(limit), 0.0, 1.0);
  const auto end = start_in_s + std::llround(expected_end_ratio(*r, used) * static_cast<double>(limit));
  return std::min(end_in_s, std::max<std::int64_t>(0, end));
}

} // namespace

double expected_end_ratio(const model::EndRatios& r, double used)
{
  constexpr std::size_t steps = model::EndRatios::steps;
  constexpr double step = 1.0 / steps;
  used = std::clamp(used, 0.0, 1.0);
  // The mass of each step above `used` (the part of the step past it, counts spread evenly).
  std::array<double, steps + 1> mass{};
  double total = 0;
  for (std::size_t i = 0; i <= steps; ++i) {
    const double lo = static_cast<double>(i) * step, hi = lo + step;
    double share = 1.0;
    if (i < steps) {
      share = used >= hi ? 0.0 : used <= lo ? 1.0 : (hi - used) / step;
    }
    mass[i] = r.counts[i] * share;
    total += mass[i];
  }
  if (total < 3) {
    return 1.0;
  }
  double seen = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    if (mass[i] > 0 && seen + mass[i] >= total / 2) {
      const double lo = std::max(used, static_cast<double>(i) * step), hi = static_cast<double>(i + 1) * step;
      return std::max(used, lo + (hi - lo) * (total / 2 - seen) / mass[i]);
    }
    seen += mass[i];
  }
  return 1.0;
}

std::optional<ExpectedWait> expected_wait(const model::Cluster& cluster, const model::QueueSnapshot& q,
                                          const Candidate& c, std::int64_t walltime_s, std::int64_t slurm_wait_s)
{
  const auto* own = ratios_of(cluster, c.partition);
  const auto* part = cluster.find_partition(c.partition);
  if (!q.known || own == nullptr || part == nullptr || slurm_wait_s <= 0) {
    return std::nullopt;
  }
  const auto excluded = text::split(c.exclude, ",");
  std::map<std::string, Timeline> nodes; // the candidate's usable nodes with its GPU type
  for (const auto& name : part->nodes) {
    const auto* n = cluster.find_node(name);
    if (n == nullptr || !n->gpus_used_known || !usable(*n) ||
        std::find(excluded.begin(), excluded.end(), name) != excluded.end()) {
      continue;
    }
    const int total = gpus_of(n->gpus, c.gpu_type, true);
    if (total < c.gpus_per_node) {
      continue;
    }
    nodes[name].now = total - gpus_of(n->gpus_used, c.gpu_type, true);
  }
  if (nodes.size() < static_cast<std::size_t>(std::max(1, c.nodes))) {
    return std::nullopt;
  }
  // The running jobs free their GPUs at their expected ends.
  for (const auto& j : q.jobs) {
    if (!j.running || !j.gpus_known || !j.start_in_s || !j.end_in_s) {
      continue;
    }
    const auto end = expected_end(ratios_of(cluster, j.partition), *j.start_in_s, *j.end_in_s);
    for (const auto& name : j.nodes) {
      if (auto it = nodes.find(name); it != nodes.end()) {
        const auto* n = cluster.find_node(name);
        it->second.add(end, gpus_of(j.gpus_per_node, c.gpu_type, n != nullptr && n->gpus.size() <= 1));
      }
    }
  }
  // Moments a job may start: now, and whenever GPUs free.
  auto moments = [&] {
    std::set<std::int64_t> at{0};
    for (const auto& [name, t] : nodes) {
      for (const auto& [when, delta] : t.changes) {
        if (delta > 0) {
          at.insert(when);
        }
      }
    }
    return at;
  };
  // The pending jobs Slurm plans to start no later than this one, in that order, each on its
  // planned nodes as soon as they have room for its expected run.
  std::vector<const model::QueuedJob*> ahead;
  for (const auto& j : q.jobs) {
    if (!j.running && j.start_in_s && *j.start_in_s <= slurm_wait_s && !j.nodes.empty()) {
      ahead.push_back(&j);
    }
  }
  std::stable_sort(ahead.begin(), ahead.end(), [](const auto* a, const auto* b) {
    return *a->start_in_s != *b->start_in_s ? *a->start_in_s < *b->start_in_s : a->priority > b->priority;
  });
  int placed = 0;
  for (const auto* j : ahead) {
    std::vector<Timeline*> on;
    for (const auto& name : j->nodes) {
      if (auto it = nodes.find(name); it != nodes.end()) {
        on.push_back(&it->second);
      }
    }
    if (on.empty()) {
      continue;
    }
    const int need = j->gpus_known ? gpus_of(j->gpus_per_node, c.gpu_type, true) : c.gpus_per_node * 1000;
    const auto planned = std::max<std::int64_t>(0, *j->start_in_s);
    const auto* r = ratios_of(cluster, j->partition);
    const auto limit = j->end_in_s ? std::max<std::int64_t>(1, *j->end_in_s - *j->start_in_s) : forever;
    const auto run =
        limit == forever || r == nullptr
            ? limit
            : std::max<std::int64_t>(1, std::llround(expected_end_ratio(*r, 0) * static_cast<double>(limit)));
    auto start = planned;
    for (auto t : moments()) {
      if (t >= planned) {
        break;
      }
      if (std::all_of(on.begin(), on.end(), [&](const Timeline* tl) { return tl->least(t, run) >= need; })) {
        start = t;
        break;
      }
    }
    for (auto* tl : on) {
      tl->add(start, -need);
      if (run != forever) {
        tl->add(start + run, need);
      }
    }
    ++placed;
  }
  // This job: the first moment enough nodes have its GPUs for its whole walltime.
  const auto want = static_cast<std::size_t>(std::max(1, c.nodes));
  for (auto t : moments()) {
    if (t >= slurm_wait_s) {
      break;
    }
    const auto fit = std::count_if(nodes.begin(), nodes.end(),
                                   [&](const auto& kv) { return kv.second.least(t, walltime_s) >= c.gpus_per_node; });
    if (static_cast<std::size_t>(fit) >= want) {
      ExpectedWait e;
      e.wait_s = t;
      e.why =
          fmt::format("expected to start in {}: jobs end early (the last day's {} ended jobs on {} used a median "
                      "{:.0f} % of their limits, from sacct; {} pending ahead replayed); Slurm's plan, every job to "
                      "its limit, says {}",
                      format_human_duration(t), own->jobs, c.partition, 100 * expected_end_ratio(*own, 0), placed,
                      format_human_duration(slurm_wait_s));
      return e;
    }
  }
  return std::nullopt;
}

} // namespace rv::strategy
