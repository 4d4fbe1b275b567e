// rv why, pure parts: which changed requests to re-plan, and which of their strategies would
// start sooner than the request as it is.

#include "app/why/why.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rv::app {

std::vector<Variant> probe_variants(const model::JobRequest& request)
{
  std::vector<Variant> out;
  out.push_back({"the same request, submitted now", {}, request, {}});
  if (request.gpu_type) {
    auto any = request;
    any.gpu_type.reset();
    out.push_back({"another GPU type", {}, std::move(any), {}});
  }
  if (request.gpus >= 2) {
    auto fewer = request;
    fewer.gpus = request.gpus / 2;
    out.push_back({fmt::format("fewer GPUs ({} instead of {})", fewer.gpus, request.gpus),
                   {"-g", std::to_string(fewer.gpus)},
                   std::move(fewer),
                   {}});
  }
  return out;
}

std::vector<Variant> derived_variants(const model::JobRequest& request, const std::vector<std::int64_t>& window_s)
{
  std::vector<Variant> out;
  std::set<std::int64_t> seen;
  auto sorted = window_s;
  std::sort(sorted.rbegin(), sorted.rend());
  for (auto w : sorted) {
    w -= w % 60; // whole minutes, as --time takes them
    if (w < 600 || w >= request.time_s || !seen.insert(w).second || seen.size() > 2) {
      continue; // under 10 minutes is rarely worth it; at most the two longest windows
    }
    auto shorter = request;
    shorter.time_s = w;
    out.push_back({fmt::format("a shorter --time ({} instead of {})", format_human_duration(w),
                               format_human_duration(request.time_s)),
                   {"--time", format_human_duration(w)},
                   std::move(shorter),
                   {}});
  }
  if (!request.allow_checkpoint) {
    auto ck = request;
    ck.allow_checkpoint = true;
    out.push_back({"checkpoint segments (only if the program saves and resumes its state)",
                   {"--checkpoint"},
                   std::move(ck),
                   {model::StrategyKind::checkpoint}});
  }
  if (!request.allow_time_min) {
    auto tm = request;
    tm.allow_time_min = true;
    out.push_back({"a limit Slurm may shorten (only if the program copes with an earlier end)",
                   {"--time-min"},
                   std::move(tm),
                   {model::StrategyKind::time_min}});
  }
  return out;
}

std::int64_t alternative_margin_s(std::optional<std::int64_t> current_wait_s, std::int64_t max_margin_s)
{
  constexpr std::int64_t k_minute = 60;
  const auto most = std::max(k_minute, max_margin_s);
  return current_wait_s ? std::clamp(*current_wait_s / 2, k_minute, most) : most;
}

std::vector<Alternative> pick_alternatives(const std::vector<VariantPlan>& plans,
                                           const std::vector<std::string>& sibling_labels,
                                           std::optional<std::int64_t> current_wait_s, std::int64_t now_s,
                                           std::int64_t margin_s, int limit)
{
  std::vector<Alternative> out;
  std::set<std::string> labels(sibling_labels.begin(), sibling_labels.end());
  for (const auto& vp : plans) {
    const auto& kinds = vp.variant.only_kinds;
    for (const auto& s : vp.strategies) {
      if (!s.est_wait_s || (!kinds.empty() && std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end())) {
        continue;
      }
      const bool sooner = current_wait_s ? *s.est_wait_s + margin_s <= *current_wait_s : *s.est_wait_s <= now_s;
      if (!sooner || !labels.insert(s.label).second) {
        continue; // not sooner, or already a sibling or an alternative
      }
      Alternative a{vp.variant.change, vp.variant.flags, s};
      a.strategy.id.clear(); // ids belong to the variant's own plan
      if (!vp.variant.request.gpu_type && !s.gpu_type.empty()) {
        a.flags.insert(a.flags.begin(), {"-t", s.gpu_type}); // pin the type it found
      }
      out.push_back(std::move(a));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Alternative& a, const Alternative& b) {
    if (*a.strategy.est_wait_s != *b.strategy.est_wait_s) {
      return *a.strategy.est_wait_s < *b.strategy.est_wait_s;
    }
    return a.strategy.est_su < b.strategy.est_su;
  });
  if (out.size() > static_cast<std::size_t>(std::max(0, limit))) {
    out.resize(static_cast<std::size_t>(std::max(0, limit)));
  }
  return out;
}

} // namespace rv::app
