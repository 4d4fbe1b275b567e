#include "core/model/cluster.hpp"

#include <algorithm>

namespace rv::model {
namespace {

bool listed(const std::vector<std::string>& list, const std::string& s)
{
  return std::find(list.begin(), list.end(), s) != list.end();
}

} // namespace

bool Partition::allows_account(const std::string& account) const
{
  return account.empty() || allow_accounts.empty() || listed(allow_accounts, "ALL") || listed(allow_accounts, account);
}

bool Partition::denies_account(const std::string& account) const
{
  return !account.empty() && listed(deny_accounts, account);
}

int Node::gpus_total() const
{
  int n = 0;
  for (const auto& g : gpus) {
    n += g.count;
  }
  return n;
}

int Node::gpus_free() const
{
  int used = 0;
  for (const auto& g : gpus_used) {
    used += g.count;
  }
  return std::max(0, gpus_total() - used);
}

const Partition* Cluster::find_partition(const std::string& name) const
{
  auto it = std::find_if(partitions.begin(), partitions.end(), [&](const auto& p) { return p.name == name; });
  return it == partitions.end() ? nullptr : &*it;
}

const Node* Cluster::find_node(const std::string& name) const
{
  auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.name == name; });
  return it == nodes.end() ? nullptr : &*it;
}

std::string UserLimits::job_qos(std::string_view requested) const
{
  if (!requested.empty()) {
    return std::string(requested);
  }
  if (!default_qos.empty()) {
    return default_qos;
  }
  return qos.size() == 1 ? qos.front() : "normal";
}

WalltimeLimit Cluster::walltime_limit(const Partition& p, std::string_view qos) const
{
  auto name = limits.job_qos(qos);
  auto wall = limits.qos_max_wall_s.find(name);
  if (wall != limits.qos_max_wall_s.end() && wall->second > 0 && (p.max_time_s < 0 || wall->second < p.max_time_s)) {
    return {wall->second, name};
  }
  return {p.max_time_s, ""};
}

} // namespace rv::model
