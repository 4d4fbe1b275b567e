#pragma once
// GPU types as the planner sees them: one entry per (partition, GRES type), derived from the
// cluster model; and the resolution of what the user typed for `--type`.

#include "core/model/cluster.hpp"
#include "core/result.hpp"
#include "strategy/profile.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rv::strategy {

// One GPU type on one partition.
struct TypeOnPartition {
  std::string partition;
  std::string gpu_type;               // GRES type as Slurm spells it; "" = untyped `gpu:N`
  int nodes_total = 0;                // nodes of the partition with this type
  int usable_nodes = 0;               // of those, up and schedulable
  int gpus_per_node = 0;              // the most GPUs of this type on one usable node
  std::vector<int> usable_gpu_counts; // GPUs of this type per usable node, sorted descending
  int cpus_per_node = 0;              // min CPUs over usable nodes with this type
  std::int64_t mem_mb_per_node = 0;   // min RealMemory over usable nodes with this type
  int node_gpus_total = 0;            // all GPUs (any type) on the node giving cpus/mem, for shares
  int free_gpus = 0;                  // unallocated GPUs of this type on usable nodes now
  bool mig_like = false;              // a MIG-style slice (profile flag, or name pattern)
  // Usable nodes with at least `gpus` GPUs of this type.
  int usable_nodes_with(int gpus) const;
};

// Derives every (partition, type) with at least one node, in partition order then type name.
std::vector<TypeOnPartition> derive_gpu_types(const model::Cluster& cluster, const Profile& profile);

// True when `type` names a MIG-like slice: the profile's `mig` flag wins, else the profile's
// mig_pattern (default `\d+g\.\d+gb`) matched against the whole name, case-insensitively;
// a name longer than model::max_gpu_type_length is never matched (false).
bool is_mig_like(const Profile& profile, const std::string& type);

// The GRES types (and partition/constraint restrictions) that `--type X` selects.
struct TypeSelection {
  std::vector<std::string> types; // exact GRES types; empty with `partition` set = any type there
  std::string partition;          // from an alias; "" = any
  std::string constraint;         // from an alias; "" = none
  std::string how;                // "exact GRES type", "profile alias 'a100'", ...
};

// Resolves `typed` against the cluster's types: exact GRES type, then profile alias, then
// case-insensitive GRES type or alias. Unknown names are usage errors with a did-you-mean hint
// listing the known names.
Result<TypeSelection> resolve_type(const std::string& typed, const std::vector<TypeOnPartition>& types,
                                   const Profile& profile);

} // namespace rv::strategy
