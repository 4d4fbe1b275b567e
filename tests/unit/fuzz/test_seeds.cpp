// The fuzz targets' seeds (fuzz/corpus/<target>/) replayed through each target in the unit
// binary: every parser and grammar still takes every seed and its invariants hold, in every test
// run, without clang or a sanitizer (scripts/fuzz.sh runs the fuzzers themselves; docs/testing.md).
// A broken invariant aborts with "rv fuzz invariant broken" (fuzz/fuzz.hpp): this case fails.
#include "fuzz_targets.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// RV_FUZZ_REPLAY_TARGETS(X) (fuzz_targets.hpp, generated from fuzz/targets.cmake) is X(name) for
// each fuzz/<name>.cpp, which tests/CMakeLists.txt compiles into this binary with its target
// named rv_fuzz_replay_<name>.
#define RV_FUZZ_DECLARE(t) int rv_fuzz_replay_##t(const std::uint8_t* data, std::size_t size);
RV_FUZZ_REPLAY_TARGETS(RV_FUZZ_DECLARE)
#undef RV_FUZZ_DECLARE

namespace {

using Target = int (*)(const std::uint8_t*, std::size_t);

// Replays every seed of fuzz/corpus/NAME through the target; the seeds are required (an empty or
// missing folder fails: the fuzzer would start from nothing).
void replay(const std::string& name, Target target)
{
  const std::filesystem::path dir = std::filesystem::path(RV_SOURCE_DIR) / "fuzz" / "corpus" / name;
  REQUIRE_MESSAGE(std::filesystem::is_directory(dir), "no seeds in " << dir.string());
  std::vector<std::filesystem::path> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      seeds.push_back(entry.path());
    }
  }
  std::sort(seeds.begin(), seeds.end());
  REQUIRE_MESSAGE(!seeds.empty(), "no seeds in " << dir.string());
  for (const auto& seed : seeds) {
    std::ifstream in(seed, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO("seed " << seed.string());
    CHECK(target(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) == 0);
  }
  MESSAGE(name << ": " << seeds.size() << " seeds replayed");
}

} // namespace

#define RV_FUZZ_CASE(t)                                                                                                \
  TEST_CASE("fuzz seeds: " #t)                                                                                         \
  {                                                                                                                    \
    replay(#t, rv_fuzz_replay_##t);                                                                                    \
  }
RV_FUZZ_REPLAY_TARGETS(RV_FUZZ_CASE)
#undef RV_FUZZ_CASE
