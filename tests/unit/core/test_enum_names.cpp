#include "core/enum_names.hpp"

#include <doctest/doctest.h>

namespace {
enum class Colour { red, green, blue };
constexpr rv::EnumNames<Colour, 2> k_names({{{Colour::red, "red"}, {Colour::green, "green"}}});
} // namespace

TEST_CASE("enum names: a value's name and back, a name or value the table lacks is nothing")
{
  static_assert(k_names.name(Colour::green) == "green"); // usable at compile time
  CHECK(k_names.name(Colour::red) == "red");
  CHECK(k_names.parse("green") == Colour::green);
  CHECK(k_names.name(Colour::blue).empty());
  CHECK_FALSE(k_names.parse("blue"));
  CHECK_FALSE(k_names.parse("Red")); // names are exact
  CHECK_FALSE(k_names.parse(""));
}
