#pragma once
// `sinfo` rows: the node-oriented format rv asks for, and any column layout told to the parser.

#include "core/model/cluster.hpp"
#include "core/result.hpp"
#include "slurm/node_state.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// What a column of sinfo output holds.
enum class SinfoField {
  node,       // NodeList/NodeHost/%N/%n: one host with -N, a hostlist without
  node_count, // Nodes/%D
  partition,  // Partition/%P (a trailing '*' marks the default partition)
  state,      // StateLong/StateCompact/%T/%t
  cpus,       // CPUs/%c
  cpus_state, // CPUsState/%C: A/I/O/T
  memory,     // Memory/%m (MB)
  alloc_mem,  // AllocMem (MB)
  gres,       // Gres/%G
  gres_used,  // GresUsed
  features,   // Features/%f
  reason,     // Reason/%E (may hold blanks; keep it last)
  ignore,     // anything else
};

// One row as printed.
struct SinfoRow {
  std::string node;
  int node_count = 1;
  std::string partition;
  bool default_partition = false;
  std::string state_text;
  NodeState state;
  int cpus = 0, cpus_alloc = 0;
  std::int64_t mem_mb = 0, alloc_mem_mb = 0;
  std::vector<model::GpuGres> gres, gres_used;
  bool has_gres_used = false;
  std::vector<std::string> features;
  std::string reason;
};

// The columns of rv's own format, in order.
const std::vector<SinfoField>& rv_sinfo_fields();

// The argv rv runs: `sinfo -N -h -O 'NodeList:|,Partition:|,StateLong:|,CPUs:|,CPUsState:|,
// Memory:|,AllocMem:|,Gres:|,GresUsed:|,Features:|,Reason:'` (`:` with no width = unpadded,
// uncut; `|` = suffix), plus `-p a,b` when `partitions` is not empty.
std::vector<std::string> sinfo_argv(const std::vector<std::string>& partitions = {});

// Parses rv's format (see sinfo_argv).
Result<std::vector<SinfoRow>> parse_sinfo(std::string_view text);

// Parses any sinfo layout given its columns; `delim` "" = auto (0x1F, '|', else blanks).
// A header line is skipped; extra fields join the last column; missing ones stay empty.
Result<std::vector<SinfoRow>> parse_sinfo_columns(std::string_view text, const std::vector<SinfoField>& fields,
                                                  std::string_view delim = "");

// Merges rows into nodes (one row per node and partition with -N); hostlists are expanded.
// Fails when the rows' hostlists name more than max_hosts hosts in all.
Result<std::vector<model::Node>> nodes_from_sinfo(const std::vector<SinfoRow>& rows);

} // namespace rv::slurm
