// sinfo with any column layout: the first line names the fields (space-separated), the rest is
// the output.
#include "fuzz/fuzz.hpp"
#include "slurm/sinfo.hpp"

#include <string>

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  auto nl = in.find('\n');
  if (nl == std::string_view::npos) {
    return 0;
  }
  // Pick fields from rv's own list by the bytes of the first line.
  const auto& all = rv::slurm::rv_sinfo_fields();
  std::vector<rv::slurm::SinfoField> fields;
  for (char c : in.substr(0, nl)) {
    if (!all.empty()) {
      fields.push_back(all[static_cast<unsigned char>(c) % all.size()]);
    }
  }
  auto rows = rv::slurm::parse_sinfo_columns(in.substr(nl + 1), fields);
  if (rows) {
    (void)rv::slurm::nodes_from_sinfo(*rows);
  }
  return 0;
}
