#pragma once
// Service units. A job's billing follows Slurm (https://slurm.schedmd.com/tres.html):
//   billing = sum over TRES of weight x count                      (default)
//   billing = max over node TRES of weight x count (+ global TRES) (PriorityFlags=MAX_TRES)
//   billing = sum of GRES + max of the other node TRES             (PriorityFlags=MAX_TRES_GRES)
// over exactly what the job asks for: CPUs, memory in GB, GRES/gpu and GRES/gpu:<type>, as job
// totals (for rv's homogeneous k-node jobs, the max of the totals equals k x the per-node max).
// Slurm keeps billing as a whole number: the fraction is truncated.
// SU = billing x hours x profile.su_per_billing_hour. Where the partition has no weights, the
// profile's su_per_gpu_hour of the type is used; failing that, Slurm's own default (billing =
// CPU count). Free types cost 0.

#include "core/model/cluster.hpp"
#include "core/model/plan.hpp"
#include "core/result.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/profile.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rv::strategy {

// The TRES a job asks for.
struct TresShape {
  int nodes = 1;
  int cpus_per_node = 1;
  std::int64_t mem_mb_per_node = 0;
  int gpus_per_node = 0;
  std::string gpu_type; // "" = untyped
};

// The SU rate of a shape on a partition.
struct SuRate {
  double billing = 0;     // billing units of the whole job (what Slurm shows as billing=N)
  double su_per_hour = 0; // SU per hour of walltime
  std::string method;     // "weights", "weights MAX_TRES", "profile rate", "cpu count", "free"
  std::string detail;     // the arithmetic, for --dry-run
};

// The SU rate of `shape` on `part`.
SuRate su_rate(const model::Partition& part, const model::SchedulerConfig& config, const Profile& profile,
               const TresShape& shape, bool free);

// SU for `seconds` at `rate`.
double su_for(const SuRate& rate, std::int64_t seconds);

// `rv cost`: the SU of one request on every type (and partition) that can run it.
struct CostRow {
  std::string gpu_type;
  std::string partition;
  int nodes = 1;
  int gpus_per_node = 1;
  int cpus_per_task = 1;
  std::int64_t mem_mb_per_node = 0;
  std::int64_t time_s = 0;
  SuRate rate;
  double su = 0;
};

struct CostTable {
  std::vector<CostRow> rows;       // cheapest first
  std::vector<Rejection> rejected; // types that cannot run the request, with reasons
};

// Prices `request` (gpus, gpu_type, time_s, optional cpus/mem) on each compatible type, using the
// fewest-node topology of each; walltime above MaxTime is priced as checkpoint segments would be.
Result<CostTable> cost_table(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request,
                             const PlanOptions& opts);

nlohmann::json to_json(const CostTable& table);

} // namespace rv::strategy
