#include "slurm/scontrol.hpp"

#include "core/duration.hpp"
#include "slurm/gres.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {
namespace {

// `UNLIMITED`, null and numbers past an int -> -1; plain counts as printed.
int count_or_unlimited(std::string_view v)
{
  return text::to_int32(v).value_or(-1);
}

Result<std::int64_t> time_field(const RecordView& r, std::string_view key)
{
  auto v = r.value(key);
  if (v.empty() || v == "NONE") {
    return -1;
  }
  auto t = parse_slurm_time(v);
  if (!t) {
    return fail(ErrorCode::parse, fmt::format("bad {}='{}' in partition {}", key, v, r.value("PartitionName")));
  }
  return *t;
}

// `ALL` means no restriction, which rv models as an empty list.
std::vector<std::string> access_list(const RecordView& r, std::string_view key)
{
  auto v = r.value(key);
  return v == "ALL" ? std::vector<std::string>{} : text::comma_list(v);
}

} // namespace

Result<model::BillingWeights> parse_billing_weights(std::string_view value)
{
  model::BillingWeights w;
  if (text::is_null(value)) {
    return w;
  }
  w.present = true;
  for (auto item : text::split(text::trim(value), ",")) {
    item = text::trim(item);
    auto eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      continue;
    }
    auto key = std::string(item.substr(0, eq));
    auto number = item.substr(eq + 1);
    double unit = 1; // Slurm: a weight with K/M/G/T is per that unit; bare Mem is per MB
    auto lkey = text::lower(key);
    if (!number.empty() && std::string_view("KMGTP").find(number.back()) != std::string_view::npos) {
      switch (number.back()) {
      case 'K':
        unit = 1.0 / (1024.0 * 1024.0);
        break;
      case 'M':
        unit = 1.0 / 1024.0;
        break;
      case 'G':
        unit = 1.0;
        break;
      case 'T':
        unit = 1024.0;
        break;
      default:
        unit = 1024.0 * 1024.0;
        break;
      }
      number.remove_suffix(1);
    } else if (lkey == "mem") {
      unit = 1.0 / 1024.0;
    }
    auto v = text::to_double(number);
    if (!v) {
      return fail(ErrorCode::parse, fmt::format("bad TRESBillingWeights entry '{}'", item));
    }
    if (lkey == "cpu") {
      w.cpu = *v;
    } else if (lkey == "mem") {
      w.mem_per_gb = *v / unit; // weight per unit -> per GiB
    } else if (lkey == "gres/gpu") {
      w.gpu = *v;
    } else if (lkey.rfind("gres/gpu:", 0) == 0) {
      w.gpu_by_type[key.substr(9)] = *v; // type names keep their case
    } else {
      w.other[key] = *v;
    }
  }
  return w;
}

Result<std::vector<model::Partition>> parse_scontrol_partitions(std::string_view text)
{
  std::vector<model::Partition> out;
  std::size_t expanded = 0;
  RecordReader reader(text);
  while (const auto* rp = reader.next()) {
    const auto& r = *rp;
    if (r.get("PartitionName") == nullptr) {
      continue;
    }
    model::Partition p;
    p.name = r.value("PartitionName");
    p.nodes_hostlist = r.value("Nodes");
    RV_TRY(nodes, expand_hostlist(p.nodes_hostlist));
    expanded += nodes.size(); // each list is at most max_hosts: no overflow
    if (expanded > max_hosts) {
      return fail(ErrorCode::parse, fmt::format("partitions list more than {} hosts in all", max_hosts));
    }
    p.nodes = std::move(nodes);
    p.state = r.value("State").empty() ? "UP" : r.value("State");
    p.is_default = r.value("Default") == "YES";
    RV_TRY(max_time, time_field(r, "MaxTime"));
    p.max_time_s = max_time;
    RV_TRY(def_time, time_field(r, "DefaultTime"));
    p.default_time_s = def_time;
    p.max_nodes = count_or_unlimited(r.value("MaxNodes"));
    p.max_cpus_per_node = count_or_unlimited(r.value("MaxCPUsPerNode"));
    // The planner multiplies these by GPU and CPU counts: past a node's bounds they count as unset.
    p.def_mem_per_gpu_mb = text::to_bounded(r.value("DefMemPerGPU"), model::max_node_mem_mb).value_or(0);
    p.def_mem_per_cpu_mb = text::to_bounded(r.value("DefMemPerCPU"), model::max_node_mem_mb).value_or(0);
    p.max_mem_per_cpu_mb = text::to_bounded(r.value("MaxMemPerCPU"), model::max_node_mem_mb).value_or(0);
    p.def_cpu_per_gpu = static_cast<int>(text::to_bounded(r.value("DefCpuPerGPU"), model::max_node_cpus).value_or(0));
    RV_TRY(billing, parse_billing_weights(r.value("TRESBillingWeights")));
    p.billing = std::move(billing);
    p.allow_accounts = access_list(r, "AllowAccounts");
    p.allow_qos = access_list(r, "AllowQos");
    p.deny_accounts = text::comma_list(r.value("DenyAccounts"));
    p.qos = r.value("QoS");
    p.priority_tier = text::to_int(r.value("PriorityTier")).value_or(1);
    if (auto tres = r.value("TRES"); !tres.empty()) {
      RV_TRY(gpus, parse_tres_gpus(tres));
      p.total_gpus = total_gpus(gpus);
    }
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace rv::slurm
