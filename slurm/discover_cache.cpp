#include "slurm/discover_cache.hpp"

#include "core/text.hpp"
#include "slurm/containers.hpp"
#include "slurm/job_ends.hpp"
#include "slurm/sinfo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace rv::slurm {
namespace {

// GPUs per type, so that `gpu:a100:4,gpu:a100:4` and `gpu:a100:8` compare equal.
std::map<std::string, int> gpu_counts(const model::Node& n)
{
  std::map<std::string, int> out;
  for (const auto& g : n.gpus) {
    out[g.type] += g.count;
  }
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v)
{
  std::sort(v.begin(), v.end());
  return v;
}

} // namespace

bool is_static_discovery(const proc::Command& cmd)
{
  const auto& a = cmd.argv;
  if (a.empty()) {
    return false;
  }
  if (a[0] == "sacctmgr" || a[0] == "readlink" || is_job_ends_command(cmd) || is_container_probe(cmd)) {
    return true; // how early jobs end changes as slowly as the associations (slurm/job_ends.hpp)
  }
  const bool show = a[0] == "scontrol" && std::find(a.begin(), a.end(), "show") != a.end();
  return show &&
         (std::find(a.begin(), a.end(), "node") != a.end() || std::find(a.begin(), a.end(), "config") != a.end());
}

proc::Command config_stamp_command()
{
  proc::Command c;
  c.argv = {"sh", "-c", "stat -L -c '%Y %s %i' \"${SLURM_CONF:-/etc/slurm/slurm.conf}\" 2>/dev/null || echo none"};
  c.timeout = std::chrono::seconds(10);
  c.concurrent = true;
  return c;
}

std::string static_fingerprint(const std::vector<proc::Command>& cmds, const std::vector<proc::Outcome>& outcomes,
                               const proc::Outcome& stamp)
{
  proc::Outcome none;
  const proc::Outcome* found = &none;
  for (std::size_t i = 0; i < cmds.size() && i < outcomes.size(); ++i) {
    if (cmds[i].argv == std::vector<std::string>{"scontrol", "-o", "show", "partition"}) {
      found = &outcomes[i];
    }
  }
  const auto& partitions = *found;
  std::string out = fmt::format("partitions exit {}\n", partitions.exit_code);
  for (auto line : text::lines(partitions.out)) {
    for (auto word : text::split_ws(line)) {
      if (!word.starts_with("State=")) {
        out += word;
        out += ' ';
      }
    }
    out += '\n';
  }
  out += "stamp ";
  out += text::trim(stamp.out);
  return out;
}

Result<std::vector<model::Node>> sinfo_nodes(const std::vector<proc::Command>& cmds,
                                             const std::vector<proc::Outcome>& outcomes)
{
  for (std::size_t i = 0; i < cmds.size() && i < outcomes.size(); ++i) {
    if (!cmds[i].argv.empty() && cmds[i].argv[0] == "sinfo") {
      if (!outcomes[i].ok()) {
        return fail(ErrorCode::slurm_rejected, fmt::format("sinfo failed (exit {})", outcomes[i].status()));
      }
      RV_TRY(rows, parse_sinfo(outcomes[i].out));
      return nodes_from_sinfo(rows);
    }
  }
  return fail(ErrorCode::generic, "discovery runs no sinfo");
}

std::string nodes_changed(const std::vector<model::Node>& cached, const std::vector<model::Node>& fresh)
{
  if (cached.size() != fresh.size()) {
    return fmt::format("{} nodes cached, {} now", cached.size(), fresh.size());
  }
  std::unordered_map<std::string_view, const model::Node*> by_name;
  for (const auto& n : cached) {
    by_name.emplace(n.name, &n);
  }
  for (const auto& f : fresh) {
    auto it = by_name.find(f.name);
    if (it == by_name.end()) {
      return fmt::format("node {} is new", f.name);
    }
    const auto& c = *it->second;
    if (c.cpus_total != f.cpus_total || c.mem_mb != f.mem_mb) {
      return fmt::format("node {}: CPUs or memory changed", f.name);
    }
    if (gpu_counts(c) != gpu_counts(f)) {
      return fmt::format("node {}: GPUs changed", f.name);
    }
    if (sorted(c.features) != sorted(f.features)) {
      return fmt::format("node {}: features changed", f.name);
    }
  }
  return {};
}

void refresh_dynamic(model::Cluster& cluster, const std::vector<model::Node>& fresh)
{
  std::unordered_map<std::string_view, const model::Node*> by_name;
  for (const auto& n : fresh) {
    by_name.emplace(n.name, &n);
  }
  for (auto& n : cluster.nodes) {
    auto it = by_name.find(n.name);
    if (it == by_name.end()) {
      continue;
    }
    const auto& f = *it->second;
    n.state = f.state;
    n.state_flags = f.state_flags;
    n.usable = f.usable;
    n.cpus_alloc = f.cpus_alloc;
    n.alloc_mem_mb = f.alloc_mem_mb;
    n.reason = f.reason;
    if (f.gpus_used_known) {
      n.gpus_used = f.gpus_used;
      n.gpus_used_known = true;
    }
  }
}

} // namespace rv::slurm
