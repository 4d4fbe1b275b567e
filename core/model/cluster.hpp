#pragma once
// What rv knows about a cluster: filled by slurm/ parsers (and the site profile), read by
// strategy/. Plain data; no behaviour beyond small queries.

#include "core/model/container.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::model {

// A GPU GRES entry: `gpu:a100:8(S:0-1)` is {type "a100", count 8}; untyped `gpu:4` has type "".
struct GpuGres {
  std::string type;
  int count = 0;
};

// The longest GPU type name rv accepts from a cluster (real ones are under 40 characters:
// `nvidia_h100_80gb_hbm3`); longer is hostile or broken output, refused before any pattern
// is matched against it.
inline constexpr std::size_t max_gpu_type_length = 128;

// The most CPUs and memory rv accepts for one node, from a cluster or a user: far past any real
// node (hundreds of CPUs, a few TiB), and small enough that the planner's products of them with
// a GPU count (at most max_request_gpus) fit an int and an int64.
inline constexpr int max_node_cpus = 16384;
inline constexpr std::int64_t max_node_mem_mb = 1024LL * 1024 * 1024; // 1024T

// One node as sinfo/scontrol show it.
struct Node {
  std::string name;
  std::vector<std::string> partitions;
  std::string state;                    // lower-case base state without flags: idle, mixed, allocated, down...
  std::vector<std::string> state_flags; // drain, reserved, maint, not_responding, cloud, ...
  bool usable = true;                   // false when down, drained, draining, failed, reserved, maint, inval
  int cpus_total = 0;
  int cpus_alloc = 0;
  std::int64_t mem_mb = 0;           // RealMemory
  std::int64_t alloc_mem_mb = 0;     // AllocMem, when known
  std::vector<GpuGres> gpus;         // configured GPUs
  std::vector<GpuGres> gpus_used;    // allocated GPUs, when known
  std::vector<std::string> features; // AvailableFeatures
  bool gpus_used_known = false;      // gpus_used came from GresUsed or an AllocTRES with gres/gpu
  std::string reason;                // why it is drained/down, as Slurm prints it; "" if none
  int gpus_total() const;
  int gpus_free() const;
};

// TRESBillingWeights of a partition. Memory weights are per GiB.
struct BillingWeights {
  bool present = false;
  double cpu = 0;
  double mem_per_gb = 0;
  double gpu = 0;                            // GRES/gpu
  std::map<std::string, double> gpu_by_type; // GRES/gpu:a100
  std::map<std::string, double> other;       // node, license, ... as written
};

// One partition, from `scontrol show partition` (and sinfo for its nodes).
struct Partition {
  std::string name;
  std::vector<std::string> nodes; // expanded host names
  std::string nodes_hostlist;     // the Nodes= hostlist as printed, for display
  int total_gpus = -1;            // gres/gpu in the partition's TRES; -1 when not printed
  std::string state = "UP";
  bool is_default = false;
  std::int64_t max_time_s = -1;     // -1 = UNLIMITED
  std::int64_t default_time_s = -1; // -1 = none
  int max_nodes = -1;               // -1 = UNLIMITED
  int max_cpus_per_node = -1;
  std::int64_t def_mem_per_gpu_mb = 0;
  std::int64_t def_mem_per_cpu_mb = 0;
  std::int64_t max_mem_per_cpu_mb = 0;
  int def_cpu_per_gpu = 0;
  BillingWeights billing;
  std::vector<std::string> allow_accounts; // empty = ALL
  std::vector<std::string> allow_qos;      // empty = ALL
  std::vector<std::string> deny_accounts;
  std::string qos; // partition QOS, "" if none
  std::int64_t priority_tier = 1;

  // AllowAccounts lets `account` in ("" = the user's default account: Slurm judges it, so yes).
  bool allows_account(const std::string& account) const;
  // DenyAccounts names `account` ("" never).
  bool denies_account(const std::string& account) const;
  bool admits_account(const std::string& account) const { return allows_account(account) && !denies_account(account); }
};

// The scheduler and site settings from `scontrol show config`.
struct SchedulerConfig {
  std::string slurm_version;
  std::string cluster_name;
  std::string controller;     // SlurmctldHost[0] (ControlMachine before 18.08): tells two clusters of one name apart
  std::string scheduler_type; // sched/backfill
  std::string priority_type;  // priority/basic (first come, first served) or priority/multifactor
  bool first_come = false;    // PriorityType is priority/basic: every pending job was there first
  std::int64_t bf_interval_s = 30; // bf_interval
  std::int64_t bf_resolution_s = 60;
  std::int64_t bf_window_min = 1440;
  std::int64_t bf_min_age_reserve_s = 0; // pending jobs younger than this get no reservation
  bool bf_continue = false;              // a backfill pass resumes after releasing its locks
  int bf_max_job_user = 0;               // 0 = no limit
  std::string priority_flags;            // e.g. MAX_TRES
  bool max_tres = false;                 // PriorityFlags has MAX_TRES
  bool max_tres_gres = false;            // PriorityFlags has MAX_TRES_GRES (GRES summed, the rest maxed)
  int bf_max_job_test = 100;             // bf_max_job_test
  std::int64_t def_mem_per_cpu_mb = 0;
  std::string select_type_parameters;
  bool requeue_allowed = true; // JobRequeue
  int max_job_count = 0;
  std::map<std::string, std::string> raw; // every key = value as printed
};

// Per-user limits that apply to every request, from QOS/associations or the site profile.
struct UserLimits {
  std::optional<int> max_gpus;        // per user, across jobs
  std::optional<int> max_submit_jobs; // MaxSubmitJobs
  std::optional<int> max_jobs;        // MaxJobs (running)
  std::string default_account;
  std::vector<std::string> accounts;                  // accounts the user has associations with
  std::vector<std::string> qos;                       // QOS names the user's associations allow
  std::vector<std::string> assoc_partitions;          // partitions the associations name; empty = not restricted
  std::string default_qos;                            // the associations' DefaultQOS; "" = none set
  std::map<std::string, std::int64_t> qos_max_wall_s; // MaxWall of each of those QOS that has one
  // The QOS a job submitted with --qos `requested` ("" = none) runs under, as slurmctld picks it:
  // the requested one, else the DefaultQOS, else the only QOS allowed, else "normal".
  std::string job_qos(std::string_view requested) const;
};

// The longest --time a job may ask for on a partition: its MaxTime, or the MaxWall of the job's
// QOS where that is shorter (Slurm leaves a longer job pending on QOSMaxWallDurationPerJobLimit,
// or refuses it with DenyOnLimit). -1 = unlimited.
struct WalltimeLimit {
  std::int64_t s = -1;
  std::string qos; // the QOS whose MaxWall it is; "" = the partition's MaxTime
  std::string what() const { return qos.empty() ? "MaxTime" : "QOS " + qos + "'s MaxWall"; }
};

// How the jobs that ended on one partition used their time limits (accounting, the last day; the
// jobs that ran, whoever's): how many ended at each elapsed/limit, in 20 steps of 0.05 and a last
// count for at or past the limit. rv's expected waits (strategy/early_end.hpp) come from it.
struct EndRatios {
  static constexpr int steps = 20;
  int jobs = 0;
  std::array<int, steps + 1> counts{};
};

// Everything discovery produced.
struct Cluster {
  std::vector<Partition> partitions;
  std::vector<Node> nodes;
  SchedulerConfig config;
  UserLimits limits;
  std::string timezone;                        // IANA name or a fixed offset like "+01:00"; "" = UTC
  std::int64_t utc_offset_s = 0;               // the cluster's offset from UTC now
  std::vector<std::string> warnings;           // discovery steps that failed but were not needed
  std::map<std::string, EndRatios> end_ratios; // by partition; empty = not read
  ContainerSupport containers;                 // the container runtimes the login node offers
  const Partition* find_partition(const std::string& name) const;
  const Node* find_node(const std::string& name) const;
  // `qos`: the request's --qos ("" = none).
  WalltimeLimit walltime_limit(const Partition& p, std::string_view qos) const;
};

} // namespace rv::model
