#include "strategy/early_end.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"
#include "strategy/window_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace rv::strategy {
namespace {

constexpr std::int64_t forever = std::numeric_limits<std::int64_t>::max() / 4;

// A fixed permutation of 0..n-1 per job (a Latin hypercube over the jobs: each job's draws cover
// its distribution evenly, the pairing across jobs is shuffled), the same for the same job id.
std::vector<int> shuffled(const std::string& id, int n)
{
  std::uint64_t state = 1469598103934665603ULL;
  for (char ch : id) {
    state = (state ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
  }
  auto next = [&state] {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[next() % i]);
  }
  return order;
}

// Where jobs past `used` of their limits ended: each step's share above `used` (counts spread
// evenly within a step), and its quantiles.
struct Conditional {
  static constexpr std::size_t steps = model::EndRatios::steps;
  static constexpr double step = 1.0 / steps;
  double used = 0;
  std::array<double, steps + 1> mass{};
  double total = 0;

  Conditional(const model::EndRatios& r, double used_share) : used(std::clamp(used_share, 0.0, 1.0))
  {
    for (std::size_t i = 0; i <= steps; ++i) {
      const double lo = static_cast<double>(i) * step, hi = lo + step;
      double share = 1.0;
      if (i < steps) {
        share = used >= hi ? 0.0 : used <= lo ? 1.0 : (hi - used) / step;
      }
      mass[i] = r.counts[i] * share;
      total += mass[i];
    }
  }
  double quantile(double q) const
  {
    if (total < 3) {
      return 1.0;
    }
    const double want = total * std::clamp(q, 0.0, 1.0);
    double seen = 0;
    for (std::size_t i = 0; i < steps; ++i) {
      if (mass[i] > 0 && seen + mass[i] >= want) {
        return within(i, want, seen);
      }
      seen += mass[i];
    }
    return 1.0;
  }
  // Where in step i the `want`-th job ended, `seen` of them in the steps below (spread evenly).
  double within(std::size_t i, double want, double seen) const
  {
    const double lo = std::max(used, static_cast<double>(i) * step), hi = static_cast<double>(i + 1) * step;
    return std::max(used, lo + (hi - lo) * (want - seen) / mass[i]);
  }
  // The quantiles at (i + 0.5) / n, i = 0..n-1, in one sweep.
  std::vector<double> quantiles(int n) const
  {
    std::vector<double> out(static_cast<std::size_t>(n), 1.0);
    if (total < 3) {
      return out;
    }
    std::size_t i = 0;
    double seen = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
      const double want = total * (static_cast<double>(k) + 0.5) / n;
      while (i < steps && (mass[i] <= 0 || seen + mass[i] < want)) {
        seen += mass[i];
        ++i;
      }
      if (i == steps) {
        break; // the rest ran to their limits
      }
      out[k] = within(i, want, seen);
    }
    return out;
  }
};

// A job's end (from the snapshot, never past its limit) in each replay: replay k draws the
// (order[k] + 0.5) / k_replays quantile of the ratios past what it has used. `start` <= 0 for a
// running job; 0 for a pending one (its run, drawn as if it started now). No ratios: its limit.
void draw_ends(EndDraws::Ends& ends, const std::string& id, const model::EndRatios* r, std::int64_t start,
               std::int64_t limit)
{
  ends.fill(limit == forever ? forever : start + limit);
  if (r == nullptr || limit == forever) {
    return;
  }
  const auto ratio = end_ratio_quantiles(*r, static_cast<double>(-start) / static_cast<double>(limit), k_replays);
  const auto order = shuffled(id, k_replays);
  for (std::size_t k = 0; k < ends.size(); ++k) {
    const auto run =
        std::max<std::int64_t>(1, std::llround(ratio[static_cast<std::size_t>(order[k])] * static_cast<double>(limit)));
    ends[k] = std::min(start + limit, std::max<std::int64_t>(0, start + run));
  }
}

// Free GPUs of the candidate's type on one node over time: `now` plus the changes, in time order.
struct Timeline {
  int now = 0;
  std::vector<std::pair<std::int64_t, int>> changes; // sorted by time

  void add(std::int64_t at, int delta)
  {
    if (at < forever) {
      const std::pair<std::int64_t, int> c{std::max<std::int64_t>(0, at), delta};
      changes.insert(std::upper_bound(changes.begin(), changes.end(), c,
                                      [](const auto& a, const auto& b) { return a.first < b.first; }),
                     c);
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

} // namespace

double end_ratio_quantile(const model::EndRatios& r, double used, double q)
{
  return Conditional(r, used).quantile(q);
}

std::vector<double> end_ratio_quantiles(const model::EndRatios& r, double used, int n)
{
  return Conditional(r, used).quantiles(n);
}

double expected_end_ratio(const model::EndRatios& r, double used)
{
  return end_ratio_quantile(r, used, 0.5);
}

EndDraws::EndDraws(const model::Cluster& cluster) : cluster_(cluster)
{
  for (const auto& [name, r] : cluster.end_ratios) {
    pooled_.jobs += r.jobs;
    for (std::size_t i = 0; i < r.counts.size(); ++i) {
      pooled_.counts[i] += r.counts[i];
    }
  }
}

EndDraws::Source EndDraws::of(const std::string& partition) const
{
  if (auto it = cluster_.end_ratios.find(partition);
      it != cluster_.end_ratios.end() && it->second.jobs >= k_min_end_jobs) {
    return {&it->second, true};
  }
  return {pooled_.jobs >= k_min_end_jobs ? &pooled_ : nullptr, false};
}

const EndDraws::Ends* EndDraws::ends(const model::QueuedJob& j)
{
  if (auto it = ends_.find(&j); it != ends_.end()) {
    return &it->second;
  }
  Ends e{};
  if (j.running) {
    if (!j.start_in_s || !j.end_in_s) {
      return nullptr;
    }
    draw_ends(e, j.id, of(j.partition).ratios, *j.start_in_s, std::max<std::int64_t>(1, *j.end_in_s - *j.start_in_s));
  } else {
    draw_ends(e, j.id, of(j.partition).ratios, 0,
              j.start_in_s && j.end_in_s ? std::max<std::int64_t>(1, *j.end_in_s - *j.start_in_s) : forever);
  }
  return &ends_.emplace(&j, e).first->second;
}

ExpectedWaits::ExpectedWaits(const model::Cluster& cluster, const QueueIndex& queue, const Candidate& c,
                             EndDraws& draws)
    : first_come_(cluster.config.first_come), partition_(c.partition), gpus_per_node_(c.gpus_per_node),
      nodes_wanted_(std::max(1, c.nodes))
{
  const auto source = draws.of(c.partition);
  const auto* part = cluster.find_partition(c.partition);
  if (!queue.queue().known || source.ratios == nullptr || part == nullptr) {
    return;
  }
  own_jobs_ = source.ratios->jobs;
  own_partition_ = source.own;
  median_ratio_ = expected_end_ratio(*source.ratios, 0);
  const auto excluded = text::split(c.exclude, ",");
  std::map<std::string, std::size_t> index; // the candidate's usable nodes with its GPU type
  for (const auto& name : part->nodes) {
    const auto* n = queue.node(name);
    if (n == nullptr || !n->gpus_used_known || !usable(*n) ||
        std::find(excluded.begin(), excluded.end(), name) != excluded.end()) {
      continue;
    }
    const int total = gpus_of(n->gpus, c.gpu_type, true);
    if (total < c.gpus_per_node || index.contains(name)) {
      continue;
    }
    index[name] = free_now_.size();
    free_now_.push_back(total - gpus_of(n->gpus_used, c.gpu_type, true));
  }
  if (free_now_.size() < static_cast<std::size_t>(nodes_wanted_)) {
    return;
  }
  // The jobs on those nodes, once each, in queue order.
  std::vector<const model::QueuedJob*> jobs;
  for (const auto& [name, at] : index) {
    const auto& on = queue.jobs_on(name);
    jobs.insert(jobs.end(), on.begin(), on.end());
  }
  std::sort(jobs.begin(), jobs.end(), std::less<>{}); // one vector's elements: its order
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  std::vector<const model::QueuedJob*> planned;
  for (const auto* j : jobs) {
    if (j->running) {
      // A running job frees its GPUs on these nodes when it ends.
      if (!j->gpus_known || !j->start_in_s || !j->end_in_s) {
        continue;
      }
      Drawn d;
      for (const auto& name : j->nodes) {
        if (auto it = index.find(name); it != index.end()) {
          const auto* n = queue.node(name);
          d.on.emplace_back(it->second, gpus_of(j->gpus_per_node, c.gpu_type, n != nullptr && n->gpus.size() <= 1));
        }
      }
      d.ends = draws.ends(*j);
      running_.push_back(std::move(d));
    } else if (j->start_in_s) {
      planned.push_back(j);
    }
  }
  // The pending jobs Slurm plans, in the order it plans them; each starts on its planned nodes as
  // soon as they have room for its run (before its planned start when jobs end early).
  std::stable_sort(planned.begin(), planned.end(), [](const auto* a, const auto* b) {
    return *a->start_in_s != *b->start_in_s ? *a->start_in_s < *b->start_in_s : a->priority > b->priority;
  });
  for (const auto* j : planned) {
    Drawn d;
    const int need = j->gpus_known ? gpus_of(j->gpus_per_node, c.gpu_type, true) : c.gpus_per_node * 1000;
    for (const auto& name : j->nodes) {
      if (auto it = index.find(name); it != index.end()) {
        d.on.emplace_back(it->second, need);
      }
    }
    d.start = std::max<std::int64_t>(0, *j->start_in_s);
    d.ends = draws.ends(*j);
    pending_.push_back(std::move(d));
  }
  ready_ = true;
}

std::optional<ExpectedWait> ExpectedWaits::at(std::int64_t walltime_s, std::int64_t slurm_wait_s) const
{
  if (!ready_ || slurm_wait_s <= 0) {
    return std::nullopt;
  }
  // Which pending jobs are ahead of this one. First come, first served (priority/basic): every
  // one, also those Slurm plans after it; their reservations hold their nodes whatever this job's
  // start (leaving them out put a 2 h job on a node whose 4 idle GPUs a whole-node job had
  // reserved 46 minutes out, on the estimates benchmark). With priorities (multifactor), a new
  // job may outrank jobs that waited (fairshare): then those Slurm plans no later than this one
  // (with every one ahead, the replays beat Slurm's plan on hopper in 5 of 10 requests only).
  std::size_t ahead = pending_.size();
  if (!first_come_) {
    ahead = 0;
    while (ahead < pending_.size() && pending_[ahead].start <= slurm_wait_s) {
      ++ahead;
    }
  }
  std::vector<Timeline> nodes(free_now_.size());
  std::vector<std::int64_t> moments; // when a job may start: now, and whenever GPUs free
  std::vector<std::int64_t> when;    // ... a pending job, on its nodes
  // One replay: the start of this job (slurm_wait_s when nothing sooner).
  auto replay = [&](std::size_t k) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      nodes[i].now = free_now_[i];
      nodes[i].changes.clear();
    }
    moments.assign(1, 0);
    for (const auto& j : running_) {
      const auto end = std::max<std::int64_t>(0, (*j.ends)[k]); // a running job has a limit: never forever
      for (auto [node, gpus] : j.on) {
        nodes[node].changes.emplace_back(end, gpus);
      }
      moments.push_back(end);
    }
    for (auto& n : nodes) { // only frees so far: their order at one time does not matter
      std::sort(n.changes.begin(), n.changes.end());
    }
    std::sort(moments.begin(), moments.end());
    moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
    for (std::size_t a = 0; a < ahead; ++a) {
      const auto& j = pending_[a];
      const auto run = (*j.ends)[k];
      // Between its nodes' releases its nodes only lose GPUs: it can first fit now or when GPUs
      // free on one of them.
      when.assign(1, 0);
      for (auto [node, need] : j.on) {
        for (const auto& [at, delta] : nodes[node].changes) {
          if (at >= j.start) {
            break;
          }
          if (delta > 0) {
            when.push_back(at);
          }
        }
      }
      if (j.on.size() > 1) { // one node's changes come in time order
        std::sort(when.begin(), when.end());
      }
      when.erase(std::unique(when.begin(), when.end()), when.end());
      auto start = j.start;
      for (auto t : when) {
        if (t >= j.start) {
          break;
        }
        if (std::all_of(j.on.begin(), j.on.end(),
                        [&](const auto& on) { return nodes[on.first].least(t, run) >= on.second; })) {
          start = t;
          break;
        }
      }
      for (auto [node, need] : j.on) {
        nodes[node].add(start, -need);
        if (run != forever) {
          nodes[node].add(start + run, need);
        }
      }
      if (run != forever) {
        const auto free_at = start + run;
        if (auto it = std::lower_bound(moments.begin(), moments.end(), free_at);
            it == moments.end() || *it != free_at) {
          moments.insert(it, free_at);
        }
      }
    }
    for (auto t : moments) {
      if (t >= slurm_wait_s) {
        break;
      }
      std::ptrdiff_t fit = 0;
      for (const auto& n : nodes) {
        if (n.least(t, walltime_s) >= gpus_per_node_ && ++fit == nodes_wanted_) {
          return t;
        }
      }
    }
    return slurm_wait_s;
  };
  std::vector<std::int64_t> starts;
  starts.reserve(k_replays);
  for (std::size_t k = 0; k < static_cast<std::size_t>(k_replays); ++k) {
    starts.push_back(replay(k));
  }
  std::sort(starts.begin(), starts.end());
  const auto median = starts[k_replays / 2];
  if (median >= slurm_wait_s) {
    return std::nullopt;
  }
  ExpectedWait e;
  e.wait_s = median;
  e.why = fmt::format(
      "expected to start in {} (the median of {} replays of the queue, half of them between {} and {}): jobs end "
      "early ({} ended jobs on {} in the last day used a median {:.0f} % of their limits, from sacct; {} pending "
      "ahead replayed); Slurm's plan, every job to its limit, says {}",
      format_human_duration(median), k_replays, format_human_duration(starts[k_replays / 4]),
      format_human_duration(starts[3 * k_replays / 4]),
      own_partition_ ? fmt::format("the {}", own_jobs_)
                     : fmt::format("too few on {}: the cluster's {}", partition_, own_jobs_),
      own_partition_ ? partition_ : "its partitions", 100 * median_ratio_, ahead, format_human_duration(slurm_wait_s));
  return e;
}

} // namespace rv::strategy
