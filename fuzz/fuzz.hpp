#pragma once
// Shared bits of the libFuzzer targets: the input as text, and an invariant check that aborts
// (libFuzzer then saves the input as a crash).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace rv::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size)
{
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void broken(const char* what, const char* file, int line)
{
  std::fprintf(stderr, "rv fuzz invariant broken: %s (%s:%d)\n", what, file, line);
  std::abort();
}

} // namespace rv::fuzz

#define RV_FUZZ_CHECK(cond)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      ::rv::fuzz::broken(#cond, __FILE__, __LINE__);                                                                   \
    }                                                                                                                  \
  } while (false)

#ifdef RV_FUZZ_REPLAY_NAME
// In the unit binary each target is a function of its own name, which replays its seeds
// (tests/unit/fuzz/test_seeds.cpp; tests/CMakeLists.txt defines the name per file).
#define RV_FUZZ_TARGET int RV_FUZZ_REPLAY_NAME(const std::uint8_t* data, std::size_t size)
#else
#define RV_FUZZ_TARGET extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
#endif
