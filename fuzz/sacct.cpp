// sacct in rv's format and in a field list told by the first line.
#include "slurm/sacct.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  (void)rv::slurm::parse_sacct(in);
  auto nl = in.find('\n');
  if (nl != std::string_view::npos) {
    (void)rv::slurm::parse_sacct(in.substr(nl + 1), in.substr(0, nl));
  }
  return 0;
}
