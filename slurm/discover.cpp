#include "slurm/discover.hpp"

#include "core/duration.hpp"
#include "slurm/cluster_time.hpp"
#include "slurm/containers.hpp"
#include "slurm/gres.hpp"
#include "slurm/job_ends.hpp"
#include "slurm/jobs.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/sinfo.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace rv::slurm {
namespace {

enum Probe : std::size_t {
  sinfo_p,
  partition_p,
  node_p,
  config_p,
  date_p,
  zone_p,
  containers_p,
  assoc_p,
  qos_p,
  user_p,
  ends_p
};
constexpr std::size_t base_probes = 7;   // no user: no accounting reads
constexpr std::size_t assoc_probes = 10; // with a user: the sacctmgr reads
constexpr std::size_t all_probes = 11;   // and how early jobs end (DiscoveryQuery::job_ends)

std::string failure(const char* what, const proc::Outcome& o)
{
  return fmt::format("{} failed (exit {}): {}", what, o.status(), text::first_line(o.err));
}

void keep_min(std::optional<int>& slot, std::optional<std::int64_t> v)
{
  if (v && *v >= 0 && (!slot || *v < *slot)) {
    slot = static_cast<int>(*v);
  }
}

std::optional<std::int64_t> gpus_in(std::string_view tres)
{
  auto gpus = parse_tres_gpus(tres);
  if (!gpus || gpus->empty()) {
    return std::nullopt;
  }
  return total_gpus(*gpus);
}

// sacctmgr -P: Account|Partition|QOS|GrpTRES|MaxTRES|MaxJobs|MaxSubmit|DefaultQOS (a row without
// DefaultQOS is read too); QOS rows: Name|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxWall; user row:
// DefaultAccount.
void parse_limits(const proc::Outcome& assoc, const proc::Outcome& qos, const proc::Outcome& user, model::Cluster& c)
{
  auto& l = c.limits;
  std::set<std::string> allowed, partitions;
  bool unrestricted = false; // a row without a partition covers them all
  for (auto line : text::lines(assoc.out)) {
    auto f = text::split(line, "|");
    if (f.size() < 7) {
      continue;
    }
    std::string account(text::trim(f[0]));
    if (!account.empty() && std::find(l.accounts.begin(), l.accounts.end(), account) == l.accounts.end()) {
      l.accounts.push_back(account);
    }
    for (const auto& q : text::comma_list(f[2])) {
      allowed.insert(q);
    }
    if (auto p = text::trim(f[1]); p.empty()) {
      unrestricted = true;
    } else {
      partitions.emplace(p);
    }
    keep_min(l.max_gpus, gpus_in(f[3]));
    keep_min(l.max_jobs, text::to_int(f[5]));
    keep_min(l.max_submit_jobs, text::to_int(f[6]));
    if (auto def = f.size() > 7 ? text::trim(f[7]) : std::string_view(); !def.empty() && l.default_qos.empty()) {
      l.default_qos = def;
    }
  }
  l.qos.assign(allowed.begin(), allowed.end());
  if (!unrestricted) {
    l.assoc_partitions.assign(partitions.begin(), partitions.end());
  }
  for (auto line : text::lines(qos.out)) {
    auto f = text::split(line, "|");
    if (f.size() < 5 || !allowed.contains(std::string(text::trim(f[0])))) {
      continue;
    }
    keep_min(l.max_gpus, gpus_in(f[1]));
    keep_min(l.max_jobs, text::to_int(f[2]));
    keep_min(l.max_submit_jobs, text::to_int(f[3]));
    if (auto wall = parse_slurm_time(text::trim(f[4])); wall && *wall > 0) {
      l.qos_max_wall_s[std::string(text::trim(f[0]))] = *wall;
    }
  }
  l.default_account = text::first_line(user.out);
}

// `+0100 CET` and `/usr/share/zoneinfo/Europe/Berlin`.
void parse_zone(const proc::Outcome& date, const proc::Outcome& zone, model::Cluster& c)
{
  if (!date.ok()) {
    c.warnings.push_back(failure("date +%z", date));
    return;
  }
  auto words = text::split_ws(date.out);
  auto offset = words.empty() ? fail(ErrorCode::parse, "empty date output") : parse_utc_offset(words[0]);
  if (!offset) {
    c.warnings.push_back(offset.error().message);
    return;
  }
  c.utc_offset_s = *offset;
  auto link = text::first_line(zone.out);
  auto at = link.find("zoneinfo/");
  if (zone.ok() && at != std::string::npos) {
    c.timezone = link.substr(at + 9);
  } else {
    auto mins = std::abs(*offset) / 60;
    c.timezone = fmt::format("{}{:02}:{:02}", *offset < 0 ? '-' : '+', mins / 60, mins % 60);
  }
}

} // namespace

std::vector<proc::Command> discovery_commands(const DiscoveryQuery& q)
{
  std::vector<proc::Command> cmds;
  cmds.push_back(concurrent_read(sinfo_argv(q.partitions)));
  cmds.push_back(concurrent_read({"scontrol", "-o", "show", "partition"}));
  cmds.push_back(concurrent_read({"scontrol", "-d", "-o", "show", "node"}));
  cmds.push_back(concurrent_read({"scontrol", "show", "config"}));
  cmds.push_back(concurrent_read({"date", "+%z %Z"}));
  cmds.push_back(concurrent_read({"readlink", "/etc/localtime"}));
  cmds.push_back(container_probe_command()); // the container runtimes (slurm/containers.hpp)
  if (!q.user.empty()) {
    cmds.push_back(concurrent_read({"sacctmgr", "-n", "-P", "show", "assoc", fmt::format("user={}", q.user),
                                    "format=Account,Partition,QOS,GrpTRES,MaxTRES,MaxJobs,MaxSubmit,DefaultQOS"}));
    cmds.push_back(concurrent_read(
        {"sacctmgr", "-n", "-P", "show", "qos", "format=Name,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxWall"}));
    cmds.push_back(concurrent_read({"sacctmgr", "-n", "-P", "show", "user", q.user, "format=DefaultAccount"}));
    if (q.job_ends) {
      cmds.push_back(job_ends_command()); // accounting too: read and cached with the associations
    }
  }
  return cmds;
}

Result<model::Cluster> parse_discovery(const std::vector<proc::Outcome>& o)
{
  if (o.size() != base_probes && o.size() != assoc_probes && o.size() != all_probes) {
    return fail(ErrorCode::generic, fmt::format("discovery expected {}, {} or {} outcomes, got {}", base_probes,
                                                assoc_probes, all_probes, o.size()));
  }
  model::Cluster c;
  // sinfo is the fallback for what scontrol did not say (a failed command, nodes without
  // GresUsed): parsed only then, which on a large cluster is most of the parse time saved.
  if (!o[sinfo_p].ok()) {
    c.warnings.push_back(failure("sinfo", o[sinfo_p]));
  }
  std::optional<std::vector<SinfoRow>> sinfo_rows;
  auto rows = [&]() -> Result<const std::vector<SinfoRow>*> {
    if (!sinfo_rows) {
      sinfo_rows.emplace();
      if (o[sinfo_p].ok()) {
        RV_TRY(r, parse_sinfo(o[sinfo_p].out));
        *sinfo_rows = std::move(r);
      }
    }
    return &*sinfo_rows;
  };
  if (o[node_p].ok()) {
    RV_TRY(nodes, parse_scontrol_nodes(o[node_p].out));
    c.nodes = std::move(nodes);
    if (std::any_of(c.nodes.begin(), c.nodes.end(), [](const auto& n) { return !n.gpus_used_known; })) {
      RV_TRY(sinfo, rows()); // scontrol without GresUsed: take sinfo's
      RV_TRY(sinfo_nodes, nodes_from_sinfo(*sinfo));
      std::unordered_map<std::string_view, const model::Node*> by_name; // linear in the node count
      for (const auto& s : sinfo_nodes) {
        by_name.emplace(s.name, &s);
      }
      for (auto& n : c.nodes) {
        if (n.gpus_used_known) {
          continue;
        }
        auto it = by_name.find(n.name);
        if (it != by_name.end() && it->second->gpus_used_known) {
          n.gpus_used = it->second->gpus_used;
          n.gpus_used_known = true;
        }
      }
    }
  } else if (o[sinfo_p].ok()) {
    c.warnings.push_back(failure("scontrol show node", o[node_p]));
    RV_TRY(sinfo, rows());
    RV_TRY(sinfo_nodes, nodes_from_sinfo(*sinfo));
    c.nodes = std::move(sinfo_nodes);
  } else {
    return fail(ErrorCode::slurm_rejected,
                fmt::format("cannot list nodes: {}", failure("scontrol show node", o[node_p])),
                "check that Slurm's commands work on the login node (sinfo, scontrol)");
  }
  if (o[partition_p].ok()) {
    RV_TRY(parts, parse_scontrol_partitions(o[partition_p].out));
    c.partitions = std::move(parts);
  } else {
    c.warnings.push_back(failure("scontrol show partition", o[partition_p]));
    RV_TRY(sinfo, rows());
    for (const auto& r : *sinfo) { // names and nodes only; limits stay unknown
      auto it =
          std::find_if(c.partitions.begin(), c.partitions.end(), [&](const auto& p) { return p.name == r.partition; });
      if (it == c.partitions.end()) {
        c.partitions.push_back(model::Partition{});
        c.partitions.back().name = r.partition;
        c.partitions.back().is_default = r.default_partition;
        it = std::prev(c.partitions.end());
      }
      it->nodes.push_back(r.node);
    }
  }
  if (o[config_p].ok()) {
    RV_TRY(config, parse_scontrol_config(o[config_p].out));
    c.config = std::move(config);
  } else {
    c.warnings.push_back(failure("scontrol show config", o[config_p]));
  }
  parse_zone(o[date_p], o[zone_p], c);
  c.containers = parse_container_probe(o[containers_p]);
  if (!c.containers.probed) {
    c.warnings.push_back(failure("the container runtime probe", o[containers_p]));
  }
  if (o.size() >= assoc_probes) {
    for (auto p : {assoc_p, qos_p, user_p}) {
      if (!o[p].ok()) {
        c.warnings.push_back(failure("sacctmgr", o[p])); // accounting may be unreadable: fine
      }
    }
    parse_limits(o[assoc_p], o[qos_p], o[user_p], c);
  }
  if (o.size() == all_probes) {
    if (!o[ends_p].ok()) {
      c.warnings.push_back(failure("sacct (how early jobs end)", o[ends_p]));
    } else if (auto ends = parse_job_ends(o[ends_p].out); ends) {
      c.end_ratios = std::move(*ends);
    } else {
      c.warnings.push_back(ends.error().message);
    }
  }
  return c;
}

Result<model::Cluster> discover(proc::Runner& runner, const DiscoveryQuery& query)
{
  RV_TRY(outcomes, runner.run_batch(discovery_commands(query)));
  return parse_discovery(outcomes);
}

} // namespace rv::slurm
