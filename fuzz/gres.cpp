// GRES and TRES strings: a list that parses sums to an int.
#include "slurm/gres.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  if (auto g = rv::slurm::parse_gres(in)) {
    RV_FUZZ_CHECK(rv::slurm::total_gpus(*g) >= 0);
  }
  if (auto t = rv::slurm::parse_tres_gpus(in)) {
    RV_FUZZ_CHECK(rv::slurm::total_gpus(*t) >= 0);
  }
  (void)rv::slurm::parse_tres_map(in);
  return 0;
}
