// Site profiles (GPU aliases, types, specs).
#include "fuzz/fuzz.hpp"
#include "strategy/profile.hpp"

RV_FUZZ_TARGET
{
  (void)rv::strategy::parse_profile(rv::fuzz::text(data, size));
  return 0;
}
