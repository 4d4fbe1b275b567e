#include "slurm/sinfo.hpp"

#include "slurm/gres.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/table.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace rv::slurm {
namespace {

// A node's CPU count; past model::max_node_cpus as unknown as an unreadable one.
std::optional<int> cpus_of(std::string_view s)
{
  auto v = text::to_bounded(s, model::max_node_cpus);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

} // namespace

const std::vector<SinfoField>& rv_sinfo_fields()
{
  using F = SinfoField;
  static const std::vector<SinfoField> fields{F::node,       F::partition, F::state,     F::cpus,
                                              F::cpus_state, F::memory,    F::alloc_mem, F::gres,
                                              F::gres_used,  F::features,  F::reason};
  return fields;
}

std::vector<std::string> sinfo_argv(const std::vector<std::string>& partitions)
{
  std::vector<std::string> argv{"sinfo", "-N", "-h", "-O",
                                "NodeList:|,Partition:|,StateLong:|,CPUs:|,CPUsState:|,Memory:|,AllocMem:|,"
                                "Gres:|,GresUsed:|,Features:|,Reason:"};
  if (!partitions.empty()) {
    argv.emplace_back("-p");
    argv.push_back(fmt::format("{}", fmt::join(partitions, ",")));
  }
  return argv;
}

Result<std::vector<SinfoRow>> parse_sinfo(std::string_view text)
{
  return parse_sinfo_columns(text, rv_sinfo_fields(), "|");
}

Result<std::vector<SinfoRow>> parse_sinfo_columns(std::string_view text, const std::vector<SinfoField>& fields,
                                                  std::string_view delim)
{
  static const std::vector<std::string> header_words{"PARTITION", "NODELIST", "HOSTNAMES", "NODES", "GRES",
                                                     "GRES_USED", "STATE",    "HOSTNAME",  "CPUS"};
  std::string used_delim(delim);
  if (used_delim.empty() && text.find('\x1f') == std::string_view::npos && text.find('|') == std::string_view::npos) {
    used_delim = ""; // blanks
  }
  auto table = parse_table(text, used_delim, header_words);
  std::vector<SinfoRow> out;
  for (auto& cells : table.rows) {
    if (cells.size() > fields.size() && !fields.empty()) { // blanks inside the last column
      std::string sep = used_delim.empty() ? " " : used_delim;
      for (auto i = fields.size(); i < cells.size(); ++i) {
        cells[fields.size() - 1] += sep + cells[i];
      }
      cells.resize(fields.size());
    }
    SinfoRow row;
    for (std::size_t i = 0; i < fields.size() && i < cells.size(); ++i) {
      const auto& c = cells[i];
      switch (fields[i]) {
      case SinfoField::node:
        row.node = c;
        break;
      case SinfoField::node_count:
        row.node_count = text::to_int32(c).value_or(0);
        break;
      case SinfoField::partition:
        row.partition = c;
        if (!row.partition.empty() && row.partition.back() == '*') {
          row.partition.pop_back();
          row.default_partition = true;
        }
        break;
      case SinfoField::state:
        row.state_text = c;
        row.state = parse_node_state(c);
        break;
      case SinfoField::cpus:
        row.cpus = cpus_of(c).value_or(0);
        break;
      case SinfoField::cpus_state: {
        auto parts = text::split(c, "/"); // A/I/O/T
        if (parts.size() == 4) {
          row.cpus_alloc = cpus_of(parts[0]).value_or(0);
          row.cpus = cpus_of(parts[3]).value_or(row.cpus);
        }
        break;
      }
      case SinfoField::memory:
        row.mem_mb = text::to_bounded(c, model::max_node_mem_mb).value_or(0);
        break;
      case SinfoField::alloc_mem:
        row.alloc_mem_mb = text::to_bounded(c, model::max_node_mem_mb).value_or(0);
        break;
      case SinfoField::gres:
      case SinfoField::gres_used: {
        auto g = parse_gres(c);
        if (!g) {
          return fail(ErrorCode::parse, fmt::format("sinfo row for '{}': {}", row.node, g.error().message));
        }
        const bool used = fields[i] == SinfoField::gres_used;
        (used ? row.gres_used : row.gres) = std::move(*g);
        row.has_gres_used = row.has_gres_used || used;
        break;
      }
      case SinfoField::features:
        row.features = text::comma_list(c);
        break;
      case SinfoField::reason:
        row.reason = text::is_null(c) || c == "none" ? "" : c;
        break;
      case SinfoField::ignore:
        break;
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<model::Node>> nodes_from_sinfo(const std::vector<SinfoRow>& rows)
{
  std::vector<model::Node> nodes;
  std::unordered_map<std::string_view, std::size_t> index; // keys view names_of_row's strings
  // Expand every row first: hostile output is refused before a single node is built.
  std::vector<std::vector<std::string>> names_of_row;
  names_of_row.reserve(rows.size());
  std::size_t expanded = 0;
  for (const auto& row : rows) {
    RV_TRY(names, expand_hostlist(row.node));
    expanded += names.size(); // each list is at most max_hosts: no overflow
    if (expanded > max_hosts) {
      return fail(ErrorCode::parse, fmt::format("sinfo lists more than {} hosts in all", max_hosts));
    }
    names_of_row.push_back(std::move(names));
  }
  index.reserve(expanded);
  nodes.reserve(expanded);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    for (const auto& name : names_of_row[r]) {
      auto [it, inserted] = index.try_emplace(name, nodes.size());
      if (inserted) {
        model::Node n;
        n.name = name;
        n.state = row.state.base;
        n.state_flags = row.state.flags;
        n.usable = row.state.usable;
        n.cpus_total = row.cpus;
        n.cpus_alloc = row.cpus_alloc;
        n.mem_mb = row.mem_mb;
        n.alloc_mem_mb = row.alloc_mem_mb;
        n.gpus = row.gres;
        n.gpus_used = row.gres_used;
        n.gpus_used_known = row.has_gres_used || row.gres.empty();
        n.features = row.features;
        n.reason = row.reason;
        nodes.push_back(std::move(n));
      }
      auto& parts = nodes[it->second].partitions;
      if (!row.partition.empty() && std::find(parts.begin(), parts.end(), row.partition) == parts.end()) {
        parts.push_back(row.partition);
      }
    }
  }
  return nodes;
}

} // namespace rv::slurm
