// sinfo rows in rv's format, then the nodes built from them.
#include "slurm/sinfo.hpp"
#include "fuzz/fuzz.hpp"
#include "slurm/hostlist.hpp"

RV_FUZZ_TARGET
{
  auto rows = rv::slurm::parse_sinfo(rv::fuzz::text(data, size));
  if (rows) {
    auto nodes = rv::slurm::nodes_from_sinfo(*rows);
    if (nodes) {
      RV_FUZZ_CHECK(nodes->size() <= rv::slurm::max_hosts);
    }
  }
  return 0;
}
