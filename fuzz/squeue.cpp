// squeue in rv's format, in a format told by the first line, and rv's request lookup.
#include "slurm/squeue.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  (void)rv::slurm::parse_squeue(in);
  (void)rv::slurm::request_jobs(in, "rv-0123");
  auto nl = in.find('\n');
  if (nl != std::string_view::npos) {
    (void)rv::slurm::parse_squeue(in.substr(nl + 1), in.substr(0, nl));
    (void)rv::slurm::long_job_state(in.substr(0, nl));
  }
  return 0;
}
