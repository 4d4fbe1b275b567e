// Site profiles (GPU aliases, types, specs).
#include "strategy/profile.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  (void)rv::strategy::parse_profile(rv::fuzz::text(data, size));
  return 0;
}
