// Numbers read from text (core/number.hpp): one grammar on every standard library, libstdc++'s
// std::from_chars and the strtod fallback of libc++ < 20 (macOS; the clang + libc++ CI lane runs
// these same cases through it).

#include "core/number.hpp"

#include <doctest/doctest.h>

#include <cmath>

TEST_CASE("number: parse_double reads the whole string by from_chars's rules")
{
  using rv::text::parse_double;
  CHECK(parse_double("1.5") == 1.5);
  CHECK(parse_double("-0.25") == -0.25);
  CHECK(parse_double("2") == 2.0);
  CHECK(parse_double(".5") == 0.5);
  CHECK(parse_double("5.") == 5.0);
  CHECK(parse_double("1e3") == 1000.0);
  CHECK(parse_double("1E-2") == 0.01);
  CHECK(parse_double("2.5e+1") == 25.0);
  CHECK(std::isinf(*parse_double("inf")));
  CHECK(std::isinf(*parse_double("-Infinity")));
  CHECK(std::isnan(*parse_double("nan")));
  for (const char* bad : {"", " 1", "1 ", "+1", "1.5x", "1e", "1e+", ".", "-", "e3", "0x10", "1,5", "--1", "in", "nan(",
                          "1e999", "infinit"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_double(bad).has_value());
  }
}
