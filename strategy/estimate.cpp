#include "strategy/estimate.hpp"

#include "core/duration.hpp"

#include <fmt/format.h>

namespace rv::strategy {

std::optional<std::int64_t> estimate_wait(const Window* window, std::int64_t walltime_s)
{
  if (window == nullptr) {
    return std::nullopt;
  }
  for (auto it = window->probes.rbegin(); it != window->probes.rend(); ++it) {
    if (it->walltime_s == walltime_s) {
      return it->start_in_s;
    }
  }
  if (window->max_now_s > 0 && walltime_s <= window->max_now_s) {
    return window->now_start_in_s;
  }
  return std::nullopt;
}

std::vector<model::Strategy> strategies_for(const Candidate& c, const Window* window, const model::JobRequest& req,
                                            const PlanOptions& opts)
{
  std::vector<model::Strategy> out;
  auto base = [&](model::StrategyKind kind) {
    model::Strategy s;
    s.shape() = c.shape();
    s.gres = c.gres;
    s.constraint = c.constraint;
    s.cpus_per_task = c.cpus_per_task;
    s.mem_mb_per_node = c.mem_mb_per_node;
    s.total_time_s = req.time_s;
    s.kind = kind;
    s.account = c.account;
    s.qos = c.qos;
    s.free = c.free;
    s.mig_like = c.mig_like;
    s.reasons = c.reasons;
    return s;
  };
  const std::int64_t t = req.time_s;
  const bool fits_max = c.max_time_s < 0 || t <= c.max_time_s;
  const std::int64_t win = window ? window->max_now_s : 0;
  auto hm = [](std::int64_t s) { return format_slurm_time(s); };
  if (fits_max) {
    bool backfill = window && win >= t;
    auto s = base(backfill ? model::StrategyKind::backfill : model::StrategyKind::direct);
    s.walltime_s = t;
    s.est_wait_s = estimate_wait(window, t);
    if (backfill) {
      s.reasons.push_back(fmt::format("backfill: {} fits the measured window of {}", hm(t), hm(win)));
    } else if (!window) {
      s.reasons.push_back("direct: no probe for this shape, wait unknown");
    } else {
      s.reasons.push_back(win > 0 ? fmt::format("direct: {} exceeds the window of {}", hm(t), hm(win))
                                  : "direct: no walltime starts now");
    }
    out.push_back(std::move(s));
    if (!backfill && window && win > 0 && win < t && req.allow_time_min) {
      auto tm = base(model::StrategyKind::time_min);
      tm.walltime_s = t;
      tm.time_min_s = win;
      tm.est_wait_s = estimate_wait(window, win);
      tm.reasons.push_back(fmt::format("time-min: Slurm may shorten the limit from {} down to {} to start now; "
                                       "the job reads its real end time",
                                       hm(t), hm(win)));
      out.push_back(std::move(tm));
    }
  }
  if (!req.allow_checkpoint) {
    return out;
  }
  std::int64_t seg = 0;
  std::string why;
  if (window && win >= opts.min_segment_s && win < t) {
    seg = c.max_time_s >= 0 ? std::min(win, c.max_time_s) : win;
    why = fmt::format("segments sized to the backfill window {}", hm(win));
  } else if (!fits_max) {
    seg = c.max_time_s;
    const auto limit = model::WalltimeLimit{c.max_time_s, c.max_time_qos}.what();
    why = fmt::format("{} exceeds {} {}: segments of {}", hm(t), limit, hm(c.max_time_s), limit);
    if (window && win > 0 && win < opts.min_segment_s) {
      why += fmt::format(" (window {} is below the {} minimum segment)", hm(win), hm(opts.min_segment_s));
    }
  }
  if (seg > opts.checkpoint_margin_s && seg < t) {
    auto ck = base(model::StrategyKind::checkpoint);
    ck.walltime_s = seg;
    std::int64_t useful = seg - opts.checkpoint_margin_s;
    ck.segments = static_cast<int>((t + useful - 1) / useful);
    ck.est_wait_s = estimate_wait(window, seg);
    ck.reasons.push_back(fmt::format("checkpoint: {}; {} segments of {} ({} per segment kept for signal and restart); "
                                     "SU covers the whole {}",
                                     why, ck.segments, hm(seg), hm(opts.checkpoint_margin_s), hm(t)));
    out.push_back(std::move(ck));
  }
  return out;
}

} // namespace rv::strategy
