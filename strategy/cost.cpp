#include "strategy/cost.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace rv::strategy {

SuRate su_rate(const model::Partition& part, const model::SchedulerConfig& config, const Profile& profile,
               const TresShape& shape, bool free)
{
  SuRate r;
  double gpus = static_cast<double>(shape.nodes * shape.gpus_per_node);
  if (free) {
    r.method = "free";
    r.detail = "free type (site profile)";
    return r;
  }
  const auto& w = part.billing;
  if (w.present) {
    double cpus = static_cast<double>(shape.nodes * shape.cpus_per_node);
    double mem_gb = static_cast<double>(shape.mem_mb_per_node * shape.nodes) / 1024.0;
    double cpu_b = w.cpu * cpus;
    double mem_b = w.mem_per_gb * mem_gb;
    double gpu_b = w.gpu * gpus;
    if (auto it = w.gpu_by_type.find(shape.gpu_type); !shape.gpu_type.empty() && it != w.gpu_by_type.end()) {
      gpu_b += it->second * gpus; // GRES/gpu and GRES/gpu:<type> are separate TRES: both count
    }
    bool max_gres = config.priority_flags.find("MAX_TRES_GRES") != std::string::npos;
    bool max_tres = !max_gres && config.max_tres;
    double billing = 0;
    if (max_gres) {
      billing = std::max(cpu_b, mem_b) + gpu_b;
      r.method = "weights MAX_TRES_GRES";
      r.detail = fmt::format("max(cpu {:g}, mem {:g}) + gres {:g}", cpu_b, mem_b, gpu_b);
    } else if (max_tres) {
      billing = std::max({cpu_b, mem_b, gpu_b});
      r.method = "weights MAX_TRES";
      r.detail = fmt::format("max(cpu {:g}, mem {:g}, gres {:g})", cpu_b, mem_b, gpu_b);
    } else {
      billing = cpu_b + mem_b + gpu_b;
      r.method = "weights";
      r.detail = fmt::format("cpu {:g} + mem {:g} + gres {:g}", cpu_b, mem_b, gpu_b);
    }
    r.billing = std::floor(billing);
    r.su_per_hour = r.billing * profile.su_per_billing_hour;
    r.detail += fmt::format(" = billing {:g}; x {:g} SU per billing-hour", r.billing, profile.su_per_billing_hour);
    return r;
  }
  if (const auto* info = profile.find(shape.gpu_type); info && info->su_per_gpu_hour) {
    r.method = "profile rate";
    r.su_per_hour = *info->su_per_gpu_hour * gpus;
    r.detail = fmt::format("{:g} SU per GPU-hour x {:g} GPUs (no billing weights on {})", *info->su_per_gpu_hour, gpus,
                           part.name);
    return r;
  }
  r.method = "cpu count";
  r.billing = static_cast<double>(shape.nodes * shape.cpus_per_node);
  r.su_per_hour = r.billing * profile.su_per_billing_hour;
  r.detail =
      fmt::format("no billing weights on {} and no profile rate: Slurm bills the {:g} CPUs", part.name, r.billing);
  return r;
}

double su_for(const SuRate& rate, std::int64_t seconds)
{
  return rate.su_per_hour * static_cast<double>(seconds) / 3600.0;
}

Result<CostTable> cost_table(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request,
                             const PlanOptions& opts)
{
  auto req = request;
  req.allow_checkpoint = true; // pricing: time above MaxTime runs as segments
  auto popts = opts;
  popts.max_topologies = 1;
  RV_TRY(cands, enumerate_candidates(cluster, profile, req, popts));
  CostTable table;
  table.rejected = std::move(cands.rejected);
  for (const auto& c : cands.list) {
    const auto* part = cluster.find_partition(c.partition);
    CostRow row{c.gpu_type, c.partition, c.nodes, c.gpus_per_node, c.cpus_per_task, c.mem_mb_per_node,
                req.time_s, {},          0};
    row.rate = su_rate(*part, cluster.config, profile,
                       {c.nodes, c.cpus_per_task, c.mem_mb_per_node, c.gpus_per_node, c.gpu_type}, c.free);
    row.su = su_for(row.rate, req.time_s);
    table.rows.push_back(std::move(row));
  }
  std::stable_sort(table.rows.begin(), table.rows.end(), [](const auto& a, const auto& b) { return a.su < b.su; });
  return table;
}

nlohmann::json to_json(const CostTable& table)
{
  auto rows = nlohmann::json::array();
  for (const auto& r : table.rows) {
    rows.push_back({{"gpu_type", r.gpu_type},
                    {"partition", r.partition},
                    {"nodes", r.nodes},
                    {"gpus_per_node", r.gpus_per_node},
                    {"cpus_per_task", r.cpus_per_task},
                    {"mem_mb", r.mem_mb_per_node},
                    {"time_s", r.time_s},
                    {"billing", r.rate.billing},
                    {"su_per_hour", r.rate.su_per_hour},
                    {"su", r.su},
                    {"method", r.rate.method},
                    {"detail", r.rate.detail}});
  }
  auto rejected = nlohmann::json::array();
  for (const auto& r : table.rejected) {
    rejected.push_back({{"gpu_type", r.gpu_type}, {"partition", r.partition}, {"reason", r.reason}});
  }
  return {{"rows", rows}, {"rejected", rejected}};
}

} // namespace rv::strategy
