#include "strategy/probe_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace rv::strategy {
namespace {

void summarize(Window& w, const PlanOptions& opts)
{
  std::vector<ProbeResult> sorted = w.probes;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.walltime_s < b.walltime_s; });
  auto starts_now = [&](const ProbeResult& p) { return p.start_in_s && *p.start_in_s <= opts.now_threshold_s; };
  std::int64_t cliff = -1; // shortest walltime that does not start now
  for (const auto& p : sorted) {
    if (!starts_now(p)) {
      cliff = p.walltime_s;
      break;
    }
  }
  for (const auto& p : sorted) {
    if (starts_now(p) && (cliff < 0 || p.walltime_s < cliff) && p.walltime_s >= w.max_now_s) {
      w.max_now_s = p.walltime_s;
      w.now_start_in_s = p.start_in_s;
    }
  }
  bool non_monotonic = std::any_of(sorted.begin(), sorted.end(),
                                   [&](const auto& p) { return starts_now(p) && cliff >= 0 && p.walltime_s > cliff; });
  if (non_monotonic) {
    w.notes.push_back(
        fmt::format("non-monotonic probes: a walltime above {} s starts now; window kept at {} s", cliff, w.max_now_s));
  }
  for (const auto& p : w.probes) {
    if (p.walltime_s == w.full_walltime_s) {
      w.full_start_in_s = p.start_in_s;
      if (!p.start_in_s) {
        w.notes.push_back(
            fmt::format("no start estimate for {} s: {}", p.walltime_s, p.message.empty() ? "no answer" : p.message));
      }
    }
  }
  if (!w.complete) {
    w.notes.push_back("probing did not finish (cut off?)");
  }
}

} // namespace

std::vector<std::int64_t> coarse_grid(const Candidate& c, const PlanOptions& opts)
{
  std::vector<std::int64_t> grid;
  for (auto w : opts.probe_grid) {
    if (w > 0 && w < c.probe_full_s) {
      grid.push_back(w);
    }
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  grid.push_back(c.probe_full_s);
  return grid;
}

const Window* Windows::find(const model::Shape& shape) const
{
  for (const auto& w : list) {
    if (w.shape() == shape) {
      return &w;
    }
  }
  return nullptr;
}

Windows make_windows(const std::vector<CandidateProbes>& probed, const std::vector<Candidate>& candidates,
                     const PlanOptions& opts)
{
  Windows out;
  for (const auto& c : candidates) {
    Window w;
    bool any = false;
    for (const auto& p : probed) {
      if (p.candidate_id != c.id) {
        continue;
      }
      any = true;
      w.probes.insert(w.probes.end(), p.probes.begin(), p.probes.end());
      w.complete = w.complete || p.complete;
    }
    if (!any || w.probes.empty()) {
      continue;
    }
    w.candidate_id = c.id;
    w.shape() = c.shape();
    w.full_walltime_s = c.probe_full_s;
    if (std::all_of(w.probes.begin(), w.probes.end(), [](const ProbeResult& r) { return r.refused; })) {
      w.refused = w.probes.front().message;
    }
    summarize(w, opts);
    out.list.push_back(std::move(w));
  }
  return out;
}

} // namespace rv::strategy
