#pragma once
// Tests that cannot run here are reported as skipped, not passed (docs/testing.md).
//
// doctest has no runtime skip, so a test that cannot run prints the marker line below and
// returns; ctest (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt) then counts it as skipped.
// Where the input is required (CI=true, or RV_REQUIRE_CORPUS=1), the test fails instead.

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace rv::test {

// The line ctest looks for; keep in step with tests/CMakeLists.txt.
inline constexpr std::string_view skip_marker = "RV-TEST-SKIPPED:";

// Reports the running test as skipped, with the reason.
inline void report_skipped(const std::string& why)
{
  std::printf("%.*s %s\n", static_cast<int>(skip_marker.size()), skip_marker.data(), why.c_str());
  std::fflush(stdout);
  MESSAGE(std::string(skip_marker) << " " << why);
}

// The shared cases folder: $RV_SHARED_CASES_DIR when set (to try a run without the corpus),
// else the one CMake found next to the checkout.
inline std::filesystem::path shared_cases_dir()
{
  const char* env = std::getenv("RV_SHARED_CASES_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env) : std::filesystem::path(RV_SHARED_CASES_DIR);
}

// Tells whether ../shared/cases/slurm-outputs (or another shared input folder) is here. When it
// is not: the test fails under RV_REQUIRE_CORPUS=1, else it is reported skipped. Either way
// the caller returns at once on false.
inline bool need_shared_dir(const std::filesystem::path& dir)
{
  if (std::filesystem::is_directory(dir)) {
    return true;
  }
  // RV_REQUIRE_CORPUS=1 or 0 decides; unset, CI=true requires it (as the testbed is in CI).
  const char* require = std::getenv("RV_REQUIRE_CORPUS");
  const char* ci = std::getenv("CI");
  const bool required =
      require != nullptr ? std::string_view(require) == "1" : ci != nullptr && std::string_view(ci) == "true";
  if (required) {
    FAIL_CHECK("no corpus at " << dir.string() << " (required: CI=true or RV_REQUIRE_CORPUS=1)");
  } else {
    report_skipped("no corpus at " + dir.string());
  }
  return false;
}

} // namespace rv::test
