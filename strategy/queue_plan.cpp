#include "strategy/queue_plan.hpp"

#include "core/duration.hpp"
#include "strategy/estimate.hpp"
#include "strategy/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace rv::strategy {
namespace {

bool same_submission(const model::Strategy& a, const model::Strategy& b)
{
  return a.walltime_s == b.walltime_s && a.time_min_s == b.time_min_s && a.segments == b.segments;
}

// What the probes said, in words, for the disagreement line.
std::string probe_words(const Window* probe, std::int64_t now_threshold_s)
{
  if (probe == nullptr) {
    return "no probe answered";
  }
  std::string full = fmt::format("the full {} starts {}", format_human_duration(probe->full_walltime_s),
                                 wait_in_words(probe->full_start_in_s));
  if (probe->max_now_s > 0) {
    return fmt::format("sbatch --test-only starts up to {} now, {}", format_human_duration(probe->max_now_s), full);
  }
  std::optional<std::int64_t> shortest;
  std::int64_t shortest_wall = 0;
  for (const auto& p : probe->probes) {
    if (shortest_wall == 0 || p.walltime_s < shortest_wall) {
      shortest_wall = p.walltime_s;
      shortest = p.start_in_s;
    }
  }
  (void)now_threshold_s;
  return fmt::format("sbatch --test-only starts nothing now (even {} starts {}), {}",
                     format_human_duration(shortest_wall), wait_in_words(shortest), full);
}

} // namespace

std::int64_t queue_walltime(const QueueWindow& qw, const Candidate& c, const BackfillTiming& timing)
{
  if (!qw.idle_now) {
    return 0;
  }
  if (!qw.until_s) {
    return c.probe_full_s;
  }
  const std::int64_t w = backfill_longest_limit_s(qw.snapshot_epoch, *qw.until_s, timing);
  return w == 0 ? 0 : std::min(w, c.probe_full_s);
}

std::vector<model::Strategy> strategies_with_queue(const Candidate& c, const Window* probe, QueueWindow& qw,
                                                   const model::JobRequest& req, const PlanOptions& opts,
                                                   const BackfillTiming& timing)
{
  auto out = strategies_for(c, probe, req, opts);
  for (auto& s : out) {
    s.window_source = probe ? model::WindowSource::probe : model::WindowSource::none;
  }
  const std::int64_t w = queue_walltime(qw, c, timing);
  qw.walltime_s = w;
  const bool probe_now = probe && probe->max_now_s > 0;
  const bool probe_full = probe && probe->full_start_in_s && *probe->full_start_in_s <= opts.now_threshold_s;
  const bool queue_full = w > 0 && w >= c.probe_full_s;
  if (probe && ((w > 0) != probe_now || queue_full != probe_full)) {
    qw.disagreement = fmt::format("{}; the queue: {}{}: both kept, the race decides", probe_words(probe, 0), qw.why,
                                  w > 0 ? fmt::format(" (sized {})", format_human_duration(w)) : "");
  }
  if (w == 0) {
    return out;
  }
  Window syn;
  syn.shape() = c.shape();
  syn.candidate_id = c.id;
  syn.full_walltime_s = c.probe_full_s;
  syn.complete = true;
  syn.max_now_s = w;
  syn.now_start_in_s = 0;
  for (auto& b : strategies_for(c, &syn, req, opts)) {
    if (!b.est_wait_s || *b.est_wait_s != 0) {
      continue; // the queue says nothing about what does not start now: the probes' estimate stands
    }
    b.window_source = model::WindowSource::queue;
    b.reasons.push_back("queue model: " + qw.why);
    auto same = std::find_if(out.begin(), out.end(), [&](const auto& a) { return same_submission(a, b); });
    if (same == out.end()) {
      if (!qw.disagreement.empty()) {
        b.reasons.push_back("disagreement: " + qw.disagreement);
      }
      out.push_back(std::move(b));
      continue;
    }
    if (same->kind == b.kind && same->est_wait_s && *same->est_wait_s <= opts.now_threshold_s) {
      same->window_source = model::WindowSource::probe_and_queue; // both start it now
      same->reasons.push_back("queue model agrees: " + qw.why);
      continue;
    }
    // One submission, two verdicts: the queue's wait ranks it; both stay in its reasons.
    b.reasons.push_back(
        fmt::format("sbatch --test-only said it starts {}; the queue model says now", wait_in_words(same->est_wait_s)));
    *same = std::move(b);
  }
  return out;
}

void cover_idle_gpus(Plan& plan, const model::JobRequest& req)
{
  auto on = [](const QueueWindow& qw) {
    return [&qw](const model::Strategy& s) {
      return s.partition == qw.partition && s.gpu_type == qw.gpu_type && model::uses_queue(s.window_source);
    };
  };
  // The strategies that start on some idle window: never the one evicted for another window.
  auto covers_idle = [&](const model::Strategy& s) {
    return std::any_of(plan.queue_windows.begin(), plan.queue_windows.end(),
                       [&](const QueueWindow& w) { return w.idle_now && on(w)(s); });
  };
  std::vector<const QueueWindow*> idle; // one per type and partition
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& qw : plan.queue_windows) {
    if (qw.idle_now && seen.emplace(qw.gpu_type, qw.partition).second) {
      idle.push_back(&qw);
    }
  }
  // First the places: a window no kept strategy uses takes the place of the last kept strategy that
  // starts on no idle window, when only the fan-out width dropped its own.
  bool moved = false;
  for (const auto* qw : idle) {
    if (std::any_of(plan.strategies.begin(), plan.strategies.end(), on(*qw))) {
      continue;
    }
    auto cut = std::find_if(plan.pruned.begin(), plan.pruned.end(), [&](const Pruned& p) {
      return on(*qw)(p.strategy) && p.reason.starts_with("beyond the fan-out width");
    });
    auto victim = std::find_if(plan.strategies.rbegin(), plan.strategies.rend(),
                               [&](const model::Strategy& s) { return !covers_idle(s); });
    if (cut == plan.pruned.end() || victim == plan.strategies.rend()) {
      continue;
    }
    auto in = std::move(cut->strategy);
    plan.pruned.erase(cut);
    auto at = std::prev(victim.base());
    auto out = std::move(*at);
    plan.strategies.erase(at);
    plan.pruned.push_back({std::move(out), fmt::format("beyond the fan-out width of {}: its place went to {}, "
                                                       "which starts on idle GPUs now",
                                                       plan.width, in.label)});
    plan.strategies.push_back(std::move(in));
    moved = true;
  }
  if (moved) {
    for (std::size_t i = 0; i < plan.strategies.size(); ++i) { // ids follow the rank order
      plan.strategies[i].id = fmt::format("s{}", i + 1);
    }
  }
  // Then one note per idle window: which strategy starts on it, or why none does.
  for (const auto* qw : idle) {
    const std::string what = fmt::format("{} {} GPUs idle now on {}", qw->idle_gpus, qw->gpu_type, qw->partition);
    auto kept = std::find_if(plan.strategies.begin(), plan.strategies.end(), on(*qw));
    if (kept != plan.strategies.end()) {
      plan.notes.push_back(fmt::format("{}: {} ({}) starts on them now ({})", what, kept->id, kept->label, qw->why));
      continue;
    }
    auto dominated =
        std::find_if(plan.pruned.begin(), plan.pruned.end(), [&](const Pruned& p) { return on(*qw)(p.strategy); });
    if (dominated != plan.pruned.end()) {
      plan.notes.push_back(fmt::format("{}: {} not kept: {}", what, dominated->strategy.label, dominated->reason));
    } else if (qw->walltime_s == 0) {
      plan.notes.push_back(fmt::format("{}: not used: {}; too short for a job after the margin", what, qw->why));
    } else {
      plan.notes.push_back(fmt::format(
          "{}: not used: they stay free for {}, less than --time {}, and {}", what,
          format_human_duration(qw->walltime_s), format_human_duration(req.time_s),
          req.allow_checkpoint ? "the window is below the shortest checkpoint segment"
                               : "neither --time-min nor --checkpoint lets a job run shorter (either would use them)"));
    }
  }
}

std::vector<std::string> describe_queue_windows(const Plan& plan, bool verbose)
{
  std::vector<std::string> out;
  for (const auto& w : plan.queue_windows) {
    std::string when = !w.idle_now ? "not idle now"
                       : w.until_s ? fmt::format("idle now for {}", format_human_duration(*w.until_s))
                                   : "idle now, nothing queued for them";
    out.push_back(fmt::format("  {:<16} {:<12} {}x{:<3} {:<34} sized {}", w.gpu_type, w.partition, w.nodes,
                              w.gpus_per_node, when, w.walltime_s > 0 ? format_human_duration(w.walltime_s) : "-"));
    if (verbose) {
      out.push_back("      " + w.why);
      if (!w.disagreement.empty()) {
        out.push_back("      disagreement: " + w.disagreement);
      }
    } else if (!w.disagreement.empty()) {
      out.push_back("      the probes disagree (-v says how): both kept, the race decides");
    }
  }
  return out;
}

} // namespace rv::strategy
