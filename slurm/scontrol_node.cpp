#include "slurm/scontrol.hpp"

#include "core/duration.hpp"
#include "slurm/gres.hpp"
#include "slurm/node_state.hpp"
#include "slurm/text.hpp"

#include <fmt/format.h>

namespace rv::slurm {

Result<model::Node> node_from_record(const RecordView& r)
{
  model::Node n;
  n.name = r.value("NodeName");
  if (n.name.empty()) {
    return fail(ErrorCode::parse, "scontrol node record without NodeName");
  }
  n.partitions = text::comma_list(r.value("Partitions"));
  auto state = parse_node_state(r.value("State"));
  n.state = state.base;
  n.state_flags = state.flags;
  n.usable = state.usable && !r.value("State").empty();
  // Past max_node_cpus/max_node_mem_mb a value is as unknown as an unreadable one.
  n.cpus_total = static_cast<int>(text::to_bounded(r.value("CPUTot"), model::max_node_cpus).value_or(0));
  n.cpus_alloc = static_cast<int>(text::to_bounded(r.value("CPUAlloc"), model::max_node_cpus).value_or(0));
  n.mem_mb = text::to_bounded(r.value("RealMemory"), model::max_node_mem_mb).value_or(0);
  n.alloc_mem_mb = text::to_bounded(r.value("AllocMem"), model::max_node_mem_mb).value_or(0);
  auto features = r.value("AvailableFeatures");
  n.features = text::comma_list(features.empty() ? r.value("Features") : features);
  n.reason = r.value("Reason");

  RV_TRY(gres, parse_gres(r.value("Gres")));
  // CfgTRES lists gres/gpu only when AccountingStorageTRES has it, so Gres comes first.
  if (gres.empty()) {
    RV_TRY(cfg, parse_tres_gpus(r.value("CfgTRES")));
    gres = std::move(cfg);
  }
  n.gpus = std::move(gres);

  if (const auto* used = r.get("GresUsed"); used != nullptr) { // only with `scontrol -d`
    RV_TRY(u, parse_gres(*used));
    n.gpus_used = std::move(u);
    n.gpus_used_known = true;
  } else if (r.value("CfgTRES").find("gres/gpu") != std::string::npos) {
    // AllocTRES then lists gres/gpu too, and its absence means none allocated.
    RV_TRY(u, parse_tres_gpus(r.value("AllocTRES")));
    n.gpus_used = std::move(u);
    n.gpus_used_known = true;
  } else if (n.gpus.empty()) {
    n.gpus_used_known = true; // no GPUs, none used
  }
  return n;
}

Result<std::vector<model::Node>> parse_scontrol_nodes(std::string_view text)
{
  std::vector<model::Node> out;
  RecordReader reader(text); // one record at a time: 10,000 nodes are megabytes of text
  while (const auto* r = reader.next()) {
    if (r->get("NodeName") == nullptr) {
      continue; // fragments such as `scontrol show node | grep gres`
    }
    RV_TRY(n, node_from_record(*r));
    out.push_back(std::move(n));
  }
  return out;
}

} // namespace rv::slurm
