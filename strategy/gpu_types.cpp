#include "strategy/gpu_types.hpp"

#include "core/config.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <unordered_map>

namespace rv::strategy {
namespace {

int count_of(const std::vector<model::GpuGres>& gres, const std::string& type)
{
  int n = 0;
  for (const auto& g : gres) {
    if (g.type == type) {
      n += g.count;
    }
  }
  return n;
}

} // namespace

int TypeOnPartition::usable_nodes_with(int gpus) const
{
  // usable_gpu_counts is sorted descending: count the prefix with >= gpus.
  auto it = std::partition_point(usable_gpu_counts.begin(), usable_gpu_counts.end(), [&](int c) { return c >= gpus; });
  return static_cast<int>(it - usable_gpu_counts.begin());
}

bool is_mig_like(const Profile& profile, const std::string& type)
{
  if (const auto* info = profile.find(type); info && info->mig) {
    return *info->mig;
  }
  if (type.empty() || type.size() > model::max_gpu_type_length) {
    return false; // std::regex recurses per character: a huge name would overflow the stack
  }
  std::regex re(profile.mig_pattern, std::regex::ECMAScript | std::regex::icase);
  return std::regex_search(type, re);
}

std::vector<TypeOnPartition> derive_gpu_types(const model::Cluster& cluster, const Profile& profile)
{
  // Node membership may be recorded on the partition, on the node, or both: take the union.
  std::unordered_map<std::string, std::size_t> node_index;
  node_index.reserve(cluster.nodes.size());
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    node_index.emplace(cluster.nodes[i].name, i);
  }
  std::unordered_map<std::string, std::size_t> part_index;
  for (std::size_t p = 0; p < cluster.partitions.size(); ++p) {
    part_index.emplace(cluster.partitions[p].name, p);
  }
  std::vector<std::vector<std::size_t>> members(cluster.partitions.size());
  for (std::size_t p = 0; p < cluster.partitions.size(); ++p) {
    for (const auto& name : cluster.partitions[p].nodes) {
      if (auto it = node_index.find(name); it != node_index.end()) {
        members[p].push_back(it->second);
      }
    }
  }
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    for (const auto& pname : cluster.nodes[i].partitions) {
      if (auto it = part_index.find(pname); it != part_index.end()) {
        members[it->second].push_back(i);
      }
    }
  }

  std::map<std::string, bool> mig_cache;
  std::vector<TypeOnPartition> out;
  for (std::size_t p = 0; p < cluster.partitions.size(); ++p) {
    auto& idx = members[p];
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    std::map<std::string, TypeOnPartition> by_type;
    for (auto i : idx) {
      const auto& node = cluster.nodes[i];
      std::set<std::string> seen;
      for (const auto& g : node.gpus) {
        if (g.count <= 0 || !seen.insert(g.type).second) {
          continue;
        }
        auto& t = by_type[g.type];
        int n = count_of(node.gpus, g.type);
        ++t.nodes_total;
        if (!node.usable) {
          continue;
        }
        ++t.usable_nodes;
        t.usable_gpu_counts.push_back(n);
        t.gpus_per_node = std::max(t.gpus_per_node, n);
        t.free_gpus += std::max(0, n - count_of(node.gpus_used, g.type));
        if (t.usable_nodes == 1 || node.cpus_total < t.cpus_per_node) {
          t.cpus_per_node = node.cpus_total;
          t.node_gpus_total = node.gpus_total();
        }
        if (t.usable_nodes == 1 || node.mem_mb < t.mem_mb_per_node) {
          t.mem_mb_per_node = node.mem_mb;
        }
      }
    }
    for (auto& [type, t] : by_type) {
      t.partition = cluster.partitions[p].name;
      t.gpu_type = type;
      std::sort(t.usable_gpu_counts.begin(), t.usable_gpu_counts.end(), std::greater<>());
      auto [it, fresh] = mig_cache.try_emplace(type, false);
      if (fresh) {
        it->second = is_mig_like(profile, type);
      }
      t.mig_like = it->second;
      out.push_back(std::move(t));
    }
  }
  return out;
}

namespace {
Result<TypeSelection> resolve_one_type(const std::string& typed, const std::vector<TypeOnPartition>& types,
                                       const Profile& profile);
} // namespace

Result<TypeSelection> resolve_type(const std::string& typed, const std::vector<TypeOnPartition>& types,
                                   const Profile& profile)
{
  if (typed.find(',') == std::string::npos) {
    return resolve_one_type(typed, types, profile);
  }
  // Several (a task file's gpu_types, `-t a100,h100`): any of them. Their GRES types are merged;
  // an alias limited to a partition or a constraint cannot be merged with the others.
  TypeSelection all;
  std::vector<std::string> hows;
  for (const auto one_view : text::split(typed, ",")) {
    const std::string one(one_view);
    if (one.empty()) {
      return fail(ErrorCode::usage, fmt::format("--type '{}' has an empty name", typed), "e.g. -t a100,h100");
    }
    RV_TRY(sel, resolve_one_type(one, types, profile));
    if (!sel.partition.empty() || !sel.constraint.empty() || sel.types.empty()) {
      return fail(ErrorCode::usage,
                  fmt::format("--type {}: '{}' is an alias limited to a partition or a constraint", typed, one),
                  "give such an alias alone");
    }
    for (auto& t : sel.types) {
      if (std::find(all.types.begin(), all.types.end(), t) == all.types.end()) {
        all.types.push_back(std::move(t));
      }
    }
    hows.push_back(fmt::format("{}: {}", one, sel.how));
  }
  all.how = fmt::format("any of several ({})", fmt::join(hows, "; "));
  return all;
}

namespace {
Result<TypeSelection> resolve_one_type(const std::string& typed, const std::vector<TypeOnPartition>& types,
                                       const Profile& profile)
{
  std::set<std::string> known;
  for (const auto& t : types) {
    if (!t.gpu_type.empty()) {
      known.insert(t.gpu_type);
    }
  }
  auto from_alias = [&](const std::string& name, const GpuAlias& alias) {
    TypeSelection sel{alias.types, alias.partition, alias.constraint, fmt::format("profile alias '{}'", name)};
    return sel;
  };
  if (known.contains(typed)) {
    return TypeSelection{{typed}, "", "", "exact GRES type"};
  }
  if (auto it = profile.aliases.find(typed); it != profile.aliases.end()) {
    return from_alias(it->first, it->second);
  }
  auto want = text::lower(typed);
  std::vector<std::string> matches;
  for (const auto& k : known) {
    if (text::lower(k) == want) {
      matches.push_back(k);
    }
  }
  if (!matches.empty()) {
    return TypeSelection{matches, "", "", "GRES type, ignoring case"};
  }
  for (const auto& [name, alias] : profile.aliases) {
    if (text::lower(name) == want) {
      return from_alias(name, alias);
    }
  }
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [name, alias] : profile.aliases) {
    names.push_back(name);
  }
  std::vector<std::string> lowered;
  for (const auto& n : names) {
    lowered.push_back(text::lower(n));
  }
  auto guess = did_you_mean(want, lowered);
  std::string hint;
  if (!guess.empty()) {
    auto pos = static_cast<std::size_t>(std::find(lowered.begin(), lowered.end(), guess) - lowered.begin());
    hint = fmt::format("did you mean '{}'? ", names[pos]);
  }
  hint += names.empty() ? "this cluster reports no typed GPUs" : fmt::format("known types: {}", fmt::join(names, ", "));
  return fail(ErrorCode::usage, fmt::format("unknown GPU type '{}'", typed), hint);
}

} // namespace

} // namespace rv::strategy
