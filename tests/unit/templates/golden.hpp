#pragma once
// Golden-file comparison: RV_UPDATE_GOLDEN=1 rewrites the files instead of comparing.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rv::testing {

inline std::string read_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::string& path, const std::string& text)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Compares `actual` with the golden file at `path` (or rewrites it under RV_UPDATE_GOLDEN=1).
inline void check_golden(const std::string& path, const std::string& actual)
{
  const char* update = std::getenv("RV_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_text(path, actual);
    MESSAGE("updated " << path);
    return;
  }
  std::ifstream probe(path);
  REQUIRE_MESSAGE(probe.good(), "missing golden file " << path << " (run with RV_UPDATE_GOLDEN=1)");
  auto expected = read_text(path);
  CHECK_MESSAGE(expected == actual, "differs from " << path << " (RV_UPDATE_GOLDEN=1 rewrites it)");
}

} // namespace rv::testing
