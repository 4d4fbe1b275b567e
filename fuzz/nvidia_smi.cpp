// nvidia-smi's CSV (with a header, and with rv's field list as noheader) and `-L`: every row has
// one cell per field, and the typed readers never invent an index, pid or negative memory total.
#include "slurm/nvidia_smi.hpp"
#include "core/text.hpp"
#include "fuzz/fuzz.hpp"

#include <string>
#include <vector>

namespace {

void check_table(const rv::Result<rv::slurm::SmiTable>& t)
{
  if (!t) {
    return;
  }
  for (const auto& row : t->rows) {
    RV_FUZZ_CHECK(row.size() == t->fields.size());
  }
  if (auto gpus = rv::slurm::read_gpus(*t)) {
    for (const auto& g : *gpus) {
      RV_FUZZ_CHECK(g.index >= 0);
    }
  }
  if (auto procs = rv::slurm::read_processes(*t)) {
    for (const auto& p : *procs) {
      RV_FUZZ_CHECK(p.pid >= 0);
    }
  }
}

} // namespace

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  static const std::vector<std::string> gpu_fields = [] {
    std::vector<std::string> f;
    for (auto s : rv::text::split(rv::slurm::k_smi_gpu_fields, ",")) {
      f.emplace_back(s);
    }
    return f;
  }();
  check_table(rv::slurm::parse_smi_csv(in));
  check_table(rv::slurm::parse_smi_csv(in, gpu_fields));
  if (auto list = rv::slurm::parse_gpu_list(in)) {
    for (const auto& g : *list) {
      RV_FUZZ_CHECK(g.index >= 0 && !g.uuid.empty());
      for (const auto& m : g.mig) {
        RV_FUZZ_CHECK(m.device >= 0 && !m.uuid.empty());
      }
    }
  }
  return 0;
}
