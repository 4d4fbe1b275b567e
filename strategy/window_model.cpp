#include "strategy/window_model.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace rv::strategy {
namespace {

constexpr std::int64_t forever = std::numeric_limits<std::int64_t>::max();

struct NodeWindow {
  std::string name;
  int free_now = 0;
  bool fits_now = false;
  std::int64_t until = forever;
  std::string ends_by;
};

NodeWindow node_window(const model::Node& n, const QueueIndex& q, const Candidate& c)
{
  NodeWindow w;
  w.name = n.name;
  const std::string& type = c.gpu_type;
  const bool one_type = n.gpus.size() <= 1;
  w.free_now = gpus_of(n.gpus, type, true) - gpus_of(n.gpus_used, type, true);
  const int want = c.gpus_per_node;
  const bool cpu_ok = n.cpus_total <= 0 || n.cpus_total - n.cpus_alloc >= c.cpus_per_task;
  const bool mem_ok = n.mem_mb <= 0 || c.mem_mb_per_node <= 0 || n.mem_mb - n.alloc_mem_mb >= c.mem_mb_per_node;
  w.fits_now = n.gpus_used_known && usable(n) && w.free_now >= want && cpu_ok && mem_ok;
  if (!w.fits_now) {
    return w;
  }
  struct Event {
    std::int64_t at;
    int delta;
    const model::QueuedJob* job;
  };
  std::vector<Event> events;
  for (const auto* jp : q.jobs_on(n.name)) {
    const auto& j = *jp;
    if (j.running) {
      if (j.end_in_s && j.gpus_known) {
        events.push_back({std::max<std::int64_t>(0, *j.end_in_s), gpus_of(j.gpus_per_node, type, one_type), &j});
      }
      continue;
    }
    if (!j.start_in_s) {
      continue; // no reservation planned: nothing to protect
    }
    int need = j.gpus_known ? gpus_of(j.gpus_per_node, type, true) : gpus_of(n.gpus, type, true);
    events.push_back({std::max<std::int64_t>(0, *j.start_in_s), -need, &j});
    if (j.end_in_s && j.gpus_known) {
      events.push_back({std::max<std::int64_t>(0, *j.end_in_s), need, &j});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  int free = w.free_now;
  for (std::size_t i = 0; i < events.size();) {
    const auto at = events[i].at;
    const model::QueuedJob* taker = nullptr;
    for (; i < events.size() && events[i].at == at; ++i) {
      free += events[i].delta;
      if (events[i].delta < 0 && taker == nullptr) {
        taker = events[i].job;
      }
    }
    if (free < want) {
      w.until = at;
      if (taker != nullptr) {
        w.ends_by = fmt::format("job {} ({}, priority {}, {} GPUs per node on {}) is planned to start in {}", taker->id,
                                taker->name, taker->priority,
                                taker->gpus_known ? std::to_string(gpus_of(taker->gpus_per_node, type, true)) : "all",
                                text::join(taker->nodes, ","), format_human_duration(at));
      }
      break;
    }
  }
  return w;
}

} // namespace

int gpus_of(const std::vector<model::GpuGres>& list, const std::string& type, bool untyped_counts)
{
  int n = 0;
  for (const auto& g : list) {
    if (type.empty() || g.type == type || (g.type.empty() && untyped_counts)) {
      n += g.count;
    }
  }
  return n;
}

bool usable(const model::Node& n)
{
  static const std::vector<std::string> bad = {"down",   "drain", "drained",  "draining", "fail",   "failing",
                                               "future", "maint", "reserved", "inval",    "unknown"};
  if (!n.usable || std::find(bad.begin(), bad.end(), n.state) != bad.end()) {
    return false;
  }
  return std::none_of(n.state_flags.begin(), n.state_flags.end(),
                      [&](const std::string& f) { return std::find(bad.begin(), bad.end(), f) != bad.end(); });
}

QueueIndex::QueueIndex(const model::Cluster& cluster, const model::QueueSnapshot& queue) : queue_(queue)
{
  nodes_.reserve(cluster.nodes.size());
  for (const auto& n : cluster.nodes) {
    nodes_.emplace(n.name, &n); // the first of a name, as Cluster::find_node
  }
  for (const auto& j : queue.jobs) {
    for (const auto& name : j.nodes) {
      auto& on = jobs_[name];
      if (on.empty() || on.back() != &j) { // a node listed twice counts once
        on.push_back(&j);
      }
    }
  }
}

const model::Node* QueueIndex::node(const std::string& name) const
{
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

const std::vector<const model::QueuedJob*>& QueueIndex::jobs_on(const std::string& node) const
{
  static const std::vector<const model::QueuedJob*> none;
  auto it = jobs_.find(node);
  return it == jobs_.end() ? none : it->second;
}

QueueWindow queue_window(const model::Cluster& cluster, const QueueIndex& index, const Candidate& c)
{
  const auto& q = index.queue();
  QueueWindow out;
  out.shape() = c.shape();
  out.candidate_id = c.id;
  out.snapshot_epoch = q.now_epoch;
  const auto* part = cluster.find_partition(c.partition);
  if (!q.known || part == nullptr) {
    out.why = "no queue model (squeue not read)";
    return out;
  }
  auto excluded = text::split(c.exclude, ",");
  std::vector<NodeWindow> fit;
  for (const auto& name : part->nodes) {
    const auto* n = index.node(name);
    if (n == nullptr || std::find(excluded.begin(), excluded.end(), name) != excluded.end()) {
      continue;
    }
    auto w = node_window(*n, index, c);
    if (n->gpus_used_known && usable(*n)) {
      out.idle_gpus += std::max(0, w.free_now);
    }
    if (w.fits_now) {
      fit.push_back(std::move(w));
    }
  }
  const auto want = static_cast<std::size_t>(std::max(1, c.nodes));
  if (fit.size() < want) {
    out.why = fmt::format("{} {} GPUs idle on {}: not {} node(s) with {} free", out.idle_gpus,
                          c.gpu_type.empty() ? "" : c.gpu_type, c.partition, c.nodes, c.gpus_per_node);
    return out;
  }
  std::stable_sort(fit.begin(), fit.end(), [](const NodeWindow& a, const NodeWindow& b) { return a.until > b.until; });
  fit.resize(want);
  out.idle_now = true;
  const auto& last = fit.back(); // the shortest of the chosen
  if (last.until != forever) {
    out.until_s = last.until;
    out.ends_by = last.ends_by;
  }
  for (const auto& w : fit) {
    out.node_names.push_back(w.name);
  }
  out.why = fmt::format("{}x{} {} GPUs idle now on {} {}", c.nodes, c.gpus_per_node, c.gpu_type,
                        text::join(out.node_names, ","),
                        out.until_s ? fmt::format("for {} (until {})", format_human_duration(*out.until_s),
                                                  out.ends_by.empty() ? "a running job's end" : out.ends_by)
                                    : "with no queued job planned on them");
  return out;
}

} // namespace rv::strategy
