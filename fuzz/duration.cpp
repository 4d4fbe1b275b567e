// The duration and memory grammar, and Slurm's time format: what parses is positive and
// round-trips through format_slurm_time.
#include "core/duration.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  if (auto d = rv::parse_duration(in)) {
    RV_FUZZ_CHECK(*d > 0);
    auto back = rv::parse_slurm_time(rv::format_slurm_time(*d));
    RV_FUZZ_CHECK(back.has_value() && *back == *d);
    (void)rv::format_human_duration(*d);
  }
  if (auto t = rv::parse_slurm_time(in)) {
    RV_FUZZ_CHECK(*t >= -1);
    if (*t >= 0) {
      auto back = rv::parse_slurm_time(rv::format_slurm_time(*t));
      RV_FUZZ_CHECK(back.has_value() && *back == *t);
    }
  }
  if (auto m = rv::parse_memory_mb(in)) {
    RV_FUZZ_CHECK(*m >= 0);
  }
  return 0;
}
