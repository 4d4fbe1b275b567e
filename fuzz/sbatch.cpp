// sbatch answers: --test-only's stderr, --parsable's stdout, and the probe script's output.
#include "slurm/sbatch.hpp"
#include "fuzz/fuzz.hpp"
#include "slurm/probe.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  (void)rv::slurm::parse_test_only(in);
  if (auto s = rv::slurm::parse_sbatch_parsable(in)) {
    RV_FUZZ_CHECK(!s->job_id.empty());
  }
  auto out = rv::slurm::parse_probe_output(in);
  for (const auto& a : out.answers) {
    RV_FUZZ_CHECK(!a.start_in_s || *a.start_in_s >= 0);
  }
  return 0;
}
