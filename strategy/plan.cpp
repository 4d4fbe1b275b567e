#include "strategy/plan.hpp"

#include "strategy/cost.hpp"
#include "strategy/early_end.hpp"
#include "strategy/estimate.hpp"
#include "strategy/queue_plan.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace rv::strategy {

Result<Plan> plan(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request,
                  const Windows& probes, const PlanOptions& opts)
{
  RV_TRY(cands, enumerate_candidates(cluster, profile, request, opts));
  return plan(cluster, profile, std::move(cands), request, probes, opts);
}

Result<Plan> plan(const model::Cluster& cluster, const Profile& profile, Candidates cands,
                  const model::JobRequest& request, const Windows& probes, const PlanOptions& opts)
{
  Plan out;
  out.rejected = std::move(cands.rejected);
  out.notes = std::move(cands.notes);
  std::vector<model::Strategy> all;
  std::set<std::pair<std::string, std::string>> produced; // (type, partition) with any strategy
  std::map<std::pair<std::string, std::string>, std::string> empty_why;
  // How backfill sizes a queue window (strategy/backfill_rule.hpp): its grid, its pass interval,
  // and rv's own time from the queue snapshot to the submission.
  const BackfillTiming timing{cluster.config.bf_resolution_s, cluster.config.bf_interval_s, opts.queue_latency_s};
  const QueueIndex queue(cluster, probes.queue); // once: every candidate asks about its nodes' jobs
  EndDraws draws(cluster);                       // each job's ends drawn once, whichever candidates replay it
  for (const auto& c : cands.list) {
    const auto* window = probes.find(c.shape());
    if (window) {
      out.windows.push_back(*window);
    }
    if (window && !window->refused.empty()) { // the real submission would be refused the same way
      empty_why.emplace(std::make_pair(c.gpu_type, c.partition), "Slurm refuses it: " + window->refused);
      continue;
    }
    std::vector<model::Strategy> strategies;
    if (probes.queue.known) {
      auto qw = queue_window(cluster, queue, c);
      strategies = strategies_with_queue(c, window, qw, request, opts, timing);
      out.queue_windows.push_back(std::move(qw));
    } else {
      strategies = strategies_for(c, window, request, opts);
      for (auto& s : strategies) {
        s.window_source = window ? model::WindowSource::probe : model::WindowSource::none;
      }
    }
    if (strategies.empty()) {
      empty_why.emplace(
          std::make_pair(c.gpu_type, c.partition),
          "--time exceeds MaxTime and no checkpoint segment fits (window too short or checkpointing off)");
      continue;
    }
    produced.emplace(c.gpu_type, c.partition);
    // Slurm's plan has every job run to its limit; where the partition's jobs end early, rv
    // expects the start sooner (strategy/early_end.hpp).
    std::optional<ExpectedWaits> expected; // the queue's draws, made when a strategy first asks
    for (auto& s : strategies) {
      s.wait_model = s.est_wait_s ? model::WaitModel::plan : model::WaitModel::none;
      if (!s.est_wait_s || *s.est_wait_s <= opts.now_threshold_s) {
        continue;
      }
      if (!expected) {
        expected.emplace(cluster, queue, c, draws);
      }
      const auto runs_for = s.time_min_s > 0 ? s.time_min_s : s.walltime_s;
      if (auto e = expected->at(runs_for, *s.est_wait_s)) {
        s.est_wait_s = e->wait_s;
        s.wait_model = model::WaitModel::replay;
        s.reasons.push_back(e->why);
      }
    }
    const auto* part = cluster.find_partition(c.partition);
    auto rate = su_rate(*part, cluster.config, profile,
                        {c.nodes, c.cpus_per_task, c.mem_mb_per_node, c.gpus_per_node, c.gpu_type}, c.free);
    for (auto& s : strategies) {
      s.est_su = su_for(rate, s.total_time_s); // checkpoint: the whole requested time
      s.reasons.push_back(fmt::format("SU {:.2f} = {:.2f} SU/h x {:.2f} h ({}: {})", s.est_su, rate.su_per_hour,
                                      static_cast<double>(s.total_time_s) / 3600.0, rate.method, rate.detail));
      all.push_back(std::move(s));
    }
  }
  for (const auto& [key, why] : empty_why) {
    if (!produced.contains(key)) {
      out.rejected.push_back({key.first, key.second, why, {}});
    }
  }
  out.width = fanout_width(cluster, opts, out.notes);
  correct_estimates(all, opts.history, out.notes); // the one place history changes an estimate
  out.rank_resolution_s = std::max<std::int64_t>({1, cluster.config.bf_resolution_s, cluster.config.bf_interval_s});
  auto ranked = rank_strategies(std::move(all), out.width, out.rank_resolution_s);
  out.strategies = std::move(ranked.kept);
  out.pruned = std::move(ranked.pruned);
  cover_idle_gpus(out, request);
  for (const auto& n : probes.queue.notes) {
    out.notes.push_back("queue: " + n);
  }
  if (out.strategies.empty()) {
    out.notes.push_back("no viable strategy: see rejected");
    if (!request.allow_checkpoint && !cluster.partitions.empty()) {
      // Only partitions with GPU nodes count: a CPU partition's longer MaxTime (7 days on the
      // 24.11 testbed's `compute`) is no way to run a GPU request.
      std::set<std::string_view> gpu_partitions;
      for (const auto& n : cluster.nodes) {
        if (n.gpus_total() > 0) {
          gpu_partitions.insert(n.partitions.begin(), n.partitions.end());
        }
      }
      // The longest walltime allowed (the QOS MaxWall caps each MaxTime), and the longest MaxTime:
      // where they differ the QOS decided. -1 = unlimited.
      auto longer = [](std::int64_t a, std::int64_t b) { return a < 0 || b < 0 ? -1 : std::max(a, b); };
      std::int64_t longest = 0, longest_max_time = 0;
      for (const auto& p : cluster.partitions) {
        if (gpu_partitions.contains(p.name)) {
          longest = longer(longest, cluster.walltime_limit(p, request.qos).s);
          longest_max_time = longer(longest_max_time, p.max_time_s);
        }
      }
      if (longest > 0 && request.time_s > longest) {
        out.longest_max_time_s = longest;
        if (longest != longest_max_time) {
          out.longest_qos = cluster.limits.job_qos(request.qos);
        }
      }
    }
  }
  return out;
}

Error no_viable_strategy(const Plan& plan)
{
  if (plan.longest_max_time_s > 0) {
    const auto longest = format_slurm_time(plan.longest_max_time_s);
    return Error{ErrorCode::no_strategy,
                 !plan.longest_qos.empty()
                     ? fmt::format("--time is longer than QOS {} allows (MaxWall {}, shorter than the GPU partitions' "
                                   "MaxTime) and checkpointing is off",
                                   plan.longest_qos, longest)
                     : fmt::format("--time is longer than every GPU partition's MaxTime (the longest is {}) and "
                                   "checkpointing is off",
                                   longest),
                 fmt::format("pass --checkpoint if the program saves its state in $RV_CHECKPOINT_DIR and resumes from "
                             "it (it then runs as segments of at most {}), or ask for --time {} or less",
                             longest, longest)};
  }
  std::string why;
  for (const auto& r : plan.rejected) {
    why += fmt::format("; {} on {}: {}", r.gpu_type.empty() ? "untyped" : r.gpu_type, r.partition, r.reason);
  }
  return Error{ErrorCode::no_strategy, "no viable strategy for this request" + why, no_fit_hint(plan)};
}

std::string no_fit_hint(const Plan& plan)
{
  // One hint per kind of cause, in the order of the rejections; a shape that does not fit is the
  // usual one.
  std::vector<std::string> hints;
  auto add = [&](std::string h) {
    if (std::find(hints.begin(), hints.end(), h) == hints.end()) {
      hints.push_back(std::move(h));
    }
  };
  for (const auto& r : plan.rejected) {
    const auto& why = r.reason;
    if (why.starts_with("not selected by --type")) {
      continue;
    }
    if (why.find("Invalid node name") != std::string::npos) {
      add("--exclude names a node Slurm does not know (`rv exec sinfo -N` lists them)");
    } else if (why.find("Invalid qos") != std::string::npos || why.starts_with("QOS ")) {
      add("check --qos (`rv status` lists yours)");
    } else if (why.find("Invalid account") != std::string::npos || why.starts_with("account ")) {
      add("check -A/--account (`rv status` lists yours)");
    } else if (why.starts_with("Slurm refuses it:")) {
      add("Slurm refuses the request itself (its words are above): check --exclude, --qos, -A and --mem");
    } else if (why.starts_with("VRAM of")) {
      add("leave --vram out, or add the types' vram_gb to the site profile");
    } else if (why.find("GB VRAM <") != std::string::npos) {
      add("no GPU type has that much memory: a smaller --vram");
    } else {
      add("`--dry-run -v` shows every shape tried; fewer GPUs, a shorter --time or --checkpoint may fit");
    }
  }
  if (hints.empty()) {
    add("`--dry-run -v` shows every shape tried; fewer GPUs, a shorter --time or --checkpoint may fit");
  }
  return text::join(hints, "; ");
}

} // namespace rv::strategy
