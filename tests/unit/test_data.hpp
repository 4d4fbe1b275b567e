#pragma once
// Reading the captured test data (tests/data): the whole file, or the test fails naming it.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rv::testing {

inline std::string read_data(const std::filesystem::path& p)
{
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in, "missing " << p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace rv::testing
