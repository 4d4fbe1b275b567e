#include "strategy/enumerate.hpp"

#include "core/duration.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace rv::strategy {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& s)
{
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string fmt_mem(std::int64_t mb)
{
  return mb % 1024 == 0 ? fmt::format("{}G", mb / 1024) : fmt::format("{}M", mb);
}

// Why the partition refuses this user outright, or "".
std::string partition_refusal(const model::Partition& part, const std::string& account, const std::string& qos)
{
  if (!text::iequals(part.state, "UP")) {
    return fmt::format("partition {} is {}", part.name, part.state);
  }
  if (!part.allows_account(account)) {
    return fmt::format("account {} is not in AllowAccounts of {}", account, part.name);
  }
  if (part.denies_account(account)) {
    return fmt::format("account {} is in DenyAccounts of {}", account, part.name);
  }
  if (!qos.empty() && !part.allow_qos.empty() && !contains(part.allow_qos, "ALL") && !contains(part.allow_qos, qos)) {
    return fmt::format("QOS {} is not in AllowQos of {}", qos, part.name);
  }
  return {};
}

// The smallest per-user GPU cap that applies to `type`, with where it comes from.
std::pair<int, std::string> user_cap(const model::Cluster& cluster, const Profile& profile, const std::string& type)
{
  std::pair<int, std::string> cap{-1, ""};
  auto take = [&](std::optional<int> v, const char* from) {
    if (v && (cap.first < 0 || *v < cap.first)) {
      cap = {*v, from};
    }
  };
  take(cluster.limits.max_gpus, "the cluster's per-user GPU limit");
  take(profile.max_gpus_per_user, "the profile's max_gpus_per_user");
  if (const auto* info = profile.find(type)) {
    take(info->max_gpus_per_user, "the profile's per-type max_gpus_per_user");
  }
  return cap;
}

// CPUs and memory per node for g GPUs of `t` on `part`: the user's values, else the partition's
// DefCpuPerGPU/DefMemPerGPU, else the GPU share of the node; MIG-like slices get small amounts.
void size_resources(Candidate& c, const TypeOnPartition& t, const model::Partition& part, const model::JobRequest& req,
                    const PlanOptions& opts)
{
  int g = c.gpus_per_node;
  int node_gpus = std::max(1, t.node_gpus_total);
  int share_cpus = std::max(1, t.cpus_per_node * g / node_gpus);
  std::int64_t share_mem = t.mem_mb_per_node * g / node_gpus;
  if (req.cpus_per_task) {
    c.cpus_per_task = *req.cpus_per_task;
    c.reasons.push_back(fmt::format("{} CPUs per node as requested", c.cpus_per_task));
  } else if (c.mig_like) {
    c.cpus_per_task = std::min(opts.mig_cpus, share_cpus);
    c.reasons.push_back(
        fmt::format("{} CPUs: MIG-like slice (min of {} and its node share)", c.cpus_per_task, opts.mig_cpus));
  } else if (part.def_cpu_per_gpu > 0) {
    c.cpus_per_task = std::min(part.def_cpu_per_gpu * g, std::max(1, t.cpus_per_node));
    c.reasons.push_back(fmt::format("{} CPUs: DefCpuPerGPU {} x {} GPUs", c.cpus_per_task, part.def_cpu_per_gpu, g));
  } else {
    c.cpus_per_task = share_cpus;
    c.reasons.push_back(
        fmt::format("{} CPUs: {} of {} GPUs' share of {} CPUs", c.cpus_per_task, g, node_gpus, t.cpus_per_node));
  }
  if (part.max_cpus_per_node > 0 && c.cpus_per_task > part.max_cpus_per_node) {
    c.cpus_per_task = part.max_cpus_per_node;
    c.reasons.push_back(fmt::format("CPUs capped at MaxCPUsPerNode {}", part.max_cpus_per_node));
  }
  if (req.mem_mb) {
    c.mem_mb_per_node = *req.mem_mb;
    c.reasons.push_back(fmt::format("memory {} per node as requested", fmt_mem(c.mem_mb_per_node)));
  } else if (c.mig_like) {
    c.mem_mb_per_node = share_mem > 0 ? std::min(opts.mig_mem_mb, share_mem) : opts.mig_mem_mb;
    c.reasons.push_back(fmt::format("memory {}: MIG-like slice", fmt_mem(c.mem_mb_per_node)));
  } else if (part.def_mem_per_gpu_mb > 0) {
    c.mem_mb_per_node = part.def_mem_per_gpu_mb * g;
    c.reasons.push_back(fmt::format("memory {}: DefMemPerGPU {} x {} GPUs", fmt_mem(c.mem_mb_per_node),
                                    fmt_mem(part.def_mem_per_gpu_mb), g));
  } else {
    c.mem_mb_per_node = share_mem;
    c.reasons.push_back(fmt::format("memory {}: {} of {} GPUs' share of {}", fmt_mem(c.mem_mb_per_node), g, node_gpus,
                                    fmt_mem(t.mem_mb_per_node)));
  }
  if (!req.mem_mb && part.max_mem_per_cpu_mb > 0 && c.mem_mb_per_node > part.max_mem_per_cpu_mb * c.cpus_per_task) {
    // Slurm would raise the CPU count (and the bill) to honour MaxMemPerCPU: ask for less memory.
    c.mem_mb_per_node = part.max_mem_per_cpu_mb * c.cpus_per_task;
    c.reasons.push_back(fmt::format("memory capped at MaxMemPerCPU x CPUs = {}", fmt_mem(c.mem_mb_per_node)));
  }
}

// The largest request of `t` that fits at all: k nodes x g GPUs with k*g as large as possible.
struct Capacity {
  int nodes = 0, per_node = 0;
  int gpus() const { return nodes * per_node; }
};
Capacity capacity(const TypeOnPartition& t, const model::Partition& part, bool single_node)
{
  Capacity best;
  for (int g = 1; g <= t.gpus_per_node; ++g) {
    int k = t.usable_nodes_with(g);
    if (part.max_nodes >= 0) {
      k = std::min(k, part.max_nodes);
    }
    if (single_node || t.mig_like) {
      k = std::min(k, 1);
    }
    if (k * g > best.gpus()) {
      best = {k, g};
    }
  }
  return best;
}

std::string plural(int n, std::string_view one, std::string_view many)
{
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// One line for a type no topology fits: the capacity when the GPU count is what does not fit,
// else the first shape's reason; the whole list goes to `details`.
std::string no_fit_summary(const TypeOnPartition& t, const model::Partition& part, const model::JobRequest& req,
                           const std::vector<std::string>& impossible)
{
  const auto cap = capacity(t, part, req.single_node);
  if (cap.gpus() < req.gpus) {
    const auto type = t.gpu_type.empty() ? std::string("untyped") : t.gpu_type;
    if (cap.gpus() == 0) {
      return fmt::format("no usable node has {} GPUs", type);
    }
    return fmt::format("at most {} in one job ({} x {}); asked for {}",
                       plural(cap.gpus(), type + " GPU", type + " GPUs"), plural(cap.nodes, "node", "nodes"),
                       cap.per_node, req.gpus);
  }
  if (impossible.empty()) {
    return "no topology fits";
  }
  if (impossible.size() == 1) {
    return "no topology fits: " + impossible.front();
  }
  const auto more = impossible.size() - 1;
  return fmt::format("no topology fits: {} (and {} more {}; -v lists them)", impossible.front(), more,
                     more == 1 ? "shape" : "shapes");
}

} // namespace

std::string effective_account(const model::Cluster& cluster, const Profile& profile, const model::JobRequest& request)
{
  if (!request.account.empty()) {
    return request.account;
  }
  if (!profile.default_account.empty()) {
    return profile.default_account;
  }
  return cluster.limits.default_account;
}

std::vector<std::string> association_warnings(const model::Cluster& cluster, const model::JobRequest& request)
{
  std::vector<std::string> out;
  const auto& l = cluster.limits;
  auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return text::iequals(n, name); });
  };
  if (!request.qos.empty() && !l.qos.empty() && !listed(l.qos, request.qos)) {
    out.push_back(fmt::format("QOS {} is not one your associations allow ({}): Slurm may refuse or hold the job",
                              request.qos, text::join(l.qos, ", ")));
  }
  if (!request.account.empty() && !l.accounts.empty() && !listed(l.accounts, request.account)) {
    out.push_back(fmt::format("account {} is not one of yours ({}): Slurm may refuse the job", request.account,
                              text::join(l.accounts, ", ")));
  }
  return out;
}

Result<Candidates> enumerate_candidates(const model::Cluster& cluster, const Profile& profile,
                                        const model::JobRequest& req, const PlanOptions& opts)
{
  Candidates out;
  auto types = derive_gpu_types(cluster, profile);
  std::optional<TypeSelection> sel;
  if (req.gpu_type && !req.gpu_type->empty()) {
    RV_TRY(s, resolve_type(*req.gpu_type, types, profile));
    out.notes.push_back(
        fmt::format("--type {} resolved as {}: {}", *req.gpu_type, s.how,
                    s.types.empty() ? std::string("any type") : fmt::format("{}", fmt::join(s.types, ", "))));
    sel = std::move(s);
  }
  if (req.gpus < 1) {
    return fail(ErrorCode::usage, fmt::format("GPU count must be at least 1, got {}", req.gpus));
  }
  auto account = effective_account(cluster, profile, req);
  for (const auto& t : types) {
    auto reject = [&](std::string reason) { out.rejected.push_back({t.gpu_type, t.partition, std::move(reason), {}}); };
    const auto* part = cluster.find_partition(t.partition);
    if (part == nullptr) {
      continue;
    }
    if (sel) {
      if (!sel->types.empty() && !contains(sel->types, t.gpu_type)) {
        reject(fmt::format("not selected by --type {}", *req.gpu_type));
        continue;
      }
      if (!sel->partition.empty() && sel->partition != t.partition) {
        reject(fmt::format("--type {} is limited to partition {}", *req.gpu_type, sel->partition));
        continue;
      }
    }
    if (auto why = partition_refusal(*part, account, req.qos); !why.empty()) {
      reject(why);
      continue;
    }
    const auto* info = profile.find(t.gpu_type);
    if (t.mig_like && !req.allow_mig) {
      reject("MIG-like slice, and MIG is off for this request");
      continue;
    }
    if (t.mig_like && req.gpus != 1) {
      reject(fmt::format("MIG-like slice: only 1-GPU requests fit (asked for {})", req.gpus));
      continue;
    }
    if (req.min_vram_gb) {
      if (!info || !info->vram_gb) {
        reject(fmt::format("VRAM of '{}' unknown (add types.{}.vram_gb to the site profile)", t.gpu_type, t.gpu_type));
        continue;
      }
      if (*info->vram_gb < *req.min_vram_gb) {
        reject(fmt::format("{} GB VRAM < {} GB asked", *info->vram_gb, *req.min_vram_gb));
        continue;
      }
    }
    if (auto [cap, from] = user_cap(cluster, profile, t.gpu_type); cap >= 0 && req.gpus > cap) {
      reject(fmt::format("{} GPUs exceed {} ({})", req.gpus, from, cap));
      continue;
    }
    if (t.usable_nodes == 0) {
      reject(fmt::format("no usable nodes ({} nodes, all down, drained or reserved)", t.nodes_total));
      continue;
    }
    const auto limit = cluster.walltime_limit(*part, req.qos);
    if (limit.s >= 0 && req.time_s > limit.s && !req.allow_checkpoint) {
      reject(fmt::format("--time {} exceeds {} {} and checkpointing is off", format_slurm_time(req.time_s),
                         limit.what(), format_slurm_time(limit.s)));
      continue;
    }
    // Topologies: k nodes x g GPUs with k*g == gpus exactly, fewest nodes first.
    std::vector<std::string> impossible;
    int made = 0;
    for (int k = 1; k <= req.gpus && made < opts.max_topologies; ++k) {
      if (req.gpus % k != 0) {
        int g_up = (req.gpus + k - 1) / k;
        if (k <= 4 && g_up <= t.gpus_per_node && g_up * k != req.gpus && k > 1) {
          impossible.push_back(
              fmt::format("{} GPUs do not split evenly over {} nodes (rv never over-allocates)", req.gpus, k));
        }
        continue;
      }
      int g = req.gpus / k;
      auto shape = fmt::format("{}x{}", k, g);
      if (req.nodes && k != *req.nodes) {
        continue; // --nodes N: only the N-node split
      }
      if (k > 1 && (req.single_node || t.mig_like)) {
        impossible.push_back(
            fmt::format("{}: {}", shape, req.single_node ? "--single-node" : "MIG-like slices are single-node"));
        break;
      }
      if (g > t.gpus_per_node) {
        impossible.push_back(fmt::format("{}: nodes have at most {} {} GPUs", shape, t.gpus_per_node,
                                         t.gpu_type.empty() ? "untyped" : t.gpu_type));
        continue;
      }
      if (part->max_nodes >= 0 && k > part->max_nodes) {
        impossible.push_back(fmt::format("{}: {} nodes exceed MaxNodes {}", shape, k, part->max_nodes));
        break;
      }
      if (int have = t.usable_nodes_with(g); have < k) {
        impossible.push_back(fmt::format("{}: only {} {} {}", shape, have,
                                         have == 1 ? "usable node has" : "usable nodes have",
                                         plural(g, "GPU", "GPUs")));
        continue;
      }
      Candidate c;
      c.gpu_type = t.gpu_type;
      c.partition = t.partition;
      c.nodes = k;
      c.gpus_per_node = g;
      c.gres = t.gpu_type.empty() ? fmt::format("gpu:{}", g) : fmt::format("gpu:{}:{}", t.gpu_type, g);
      c.constraint = sel ? sel->constraint : "";
      c.account = account;
      c.qos = req.qos;
      c.exclude = fmt::format("{}", fmt::join(req.exclude_nodes, ","));
      c.mig_like = t.mig_like;
      c.free = info && info->free;
      c.max_time_s = limit.s;
      c.max_time_qos = limit.qos;
      c.probe_full_s = limit.s >= 0 ? std::min(req.time_s, limit.s) : req.time_s;
      if (c.mig_like) {
        c.reasons.push_back(
            fmt::format("MIG-like slice{}: included because the request allows MIG",
                        info && info->vram_gb ? fmt::format(" ({} GB VRAM)", *info->vram_gb) : std::string()));
      }
      size_resources(c, t, *part, req, opts);
      if (c.cpus_per_task > t.cpus_per_node) {
        impossible.push_back(
            fmt::format("{}: {} CPUs per node > {} on the nodes", shape, c.cpus_per_task, t.cpus_per_node));
        continue;
      }
      if (c.mem_mb_per_node > t.mem_mb_per_node) {
        impossible.push_back(fmt::format("{}: {} memory per node > {} on the nodes", shape, fmt_mem(c.mem_mb_per_node),
                                         fmt_mem(t.mem_mb_per_node)));
        continue;
      }
      for (const auto& why : impossible) {
        c.reasons.push_back("not " + why);
      }
      ++made;
      out.list.push_back(std::move(c));
    }
    if (made == 0) {
      reject(no_fit_summary(t, *part, req, impossible));
      out.rejected.back().details = std::move(impossible);
    }
  }
  for (std::size_t i = 0; i < out.list.size(); ++i) {
    out.list[i].id = fmt::format("c{}", i + 1);
  }
  return out;
}

} // namespace rv::strategy
