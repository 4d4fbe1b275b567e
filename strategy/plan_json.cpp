#include "strategy/plan.hpp"

#include <nlohmann/json.hpp>

namespace rv::strategy {

using nlohmann::json;

namespace {

json opt(const std::optional<std::int64_t>& v)
{
  return v ? json(*v) : json(nullptr);
}

// SU rounded to 2 decimals so golden files do not depend on the last bits of a double.
double round2(double v)
{
  return static_cast<double>(static_cast<long long>(v * 100.0 + (v >= 0 ? 0.5 : -0.5))) / 100.0;
}

} // namespace

json to_json(const model::Strategy& s)
{
  return {{"id", s.id},
          {"label", s.label},
          {"kind", model::to_string(s.kind)},
          {"gpu_type", s.gpu_type},
          {"partition", s.partition},
          {"gres", s.gres},
          {"constraint", s.constraint},
          {"account", s.account},
          {"qos", s.qos},
          {"nodes", s.nodes},
          {"gpus_per_node", s.gpus_per_node},
          {"cpus_per_task", s.cpus_per_task},
          {"mem_mb", s.mem_mb_per_node},
          {"walltime_s", s.walltime_s},
          {"time_min_s", s.time_min_s},
          {"total_time_s", s.total_time_s},
          {"segments", s.segments},
          {"est_wait_s", opt(s.est_wait_s)},
          {"est_su", round2(s.est_su)},
          {"free", s.free},
          {"mig_like", s.mig_like},
          {"window_source", model::to_string(s.window_source)},
          {"wait_model", model::to_string(s.wait_model)},
          {"reasons", s.reasons}};
}

json to_json(const Window& w)
{
  auto probes = json::array();
  for (const auto& p : w.probes) {
    probes.push_back({{"walltime_s", p.walltime_s},
                      {"start_in_s", opt(p.start_in_s)},
                      {"message", p.message},
                      {"refused", p.refused}});
  }
  return {{"candidate", w.candidate_id},
          {"gpu_type", w.gpu_type},
          {"partition", w.partition},
          {"nodes", w.nodes},
          {"gpus_per_node", w.gpus_per_node},
          {"max_now_s", w.max_now_s},
          {"now_start_in_s", opt(w.now_start_in_s)},
          {"full_walltime_s", w.full_walltime_s},
          {"full_start_in_s", opt(w.full_start_in_s)},
          {"complete", w.complete},
          {"refused", w.refused},
          {"probes", probes},
          {"notes", w.notes}};
}

json to_json(const QueueWindow& w)
{
  return {{"candidate", w.candidate_id},
          {"gpu_type", w.gpu_type},
          {"partition", w.partition},
          {"nodes", w.nodes},
          {"gpus_per_node", w.gpus_per_node},
          {"idle_now", w.idle_now},
          {"until_s", opt(w.until_s)},
          {"snapshot_epoch", w.snapshot_epoch},
          {"idle_gpus", w.idle_gpus},
          {"node_names", w.node_names},
          {"ends_by", w.ends_by},
          {"walltime_s", w.walltime_s},
          {"disagreement", w.disagreement},
          {"why", w.why}};
}

json to_json(const Plan& plan)
{
  auto strategies = json::array();
  for (const auto& s : plan.strategies) {
    strategies.push_back(to_json(s));
  }
  auto windows = json::array();
  for (const auto& w : plan.windows) {
    windows.push_back(to_json(w));
  }
  auto queue_windows = json::array();
  for (const auto& w : plan.queue_windows) {
    queue_windows.push_back(to_json(w));
  }
  auto rejected = json::array();
  for (const auto& r : plan.rejected) {
    rejected.push_back(
        {{"gpu_type", r.gpu_type}, {"partition", r.partition}, {"reason", r.reason}, {"details", r.details}});
  }
  auto pruned = json::array();
  for (const auto& p : plan.pruned) {
    pruned.push_back({{"label", p.strategy.label},
                      {"partition", p.strategy.partition},
                      {"kind", model::to_string(p.strategy.kind)},
                      {"est_wait_s", opt(p.strategy.est_wait_s)},
                      {"est_su", round2(p.strategy.est_su)},
                      {"reason", p.reason}});
  }
  return {{"strategies", strategies},
          {"windows", windows},
          {"queue_windows", queue_windows},
          {"rejected", rejected},
          {"pruned", pruned},
          {"notes", plan.notes},
          {"width", plan.width},
          {"rank_resolution_s", plan.rank_resolution_s}};
}

} // namespace rv::strategy
