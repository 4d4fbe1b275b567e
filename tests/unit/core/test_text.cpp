// The text helpers every folder shares (core/text).

#include "core/text.hpp"

#include <doctest/doctest.h>

using namespace rv::text;
using SV = std::vector<std::string_view>;

TEST_CASE("text: trim, case and comparison")
{
  CHECK(trim(" \t a b \r\n") == "a b");
  CHECK(trim("  ").empty());
  CHECK(lower("A100_80GB-x") == "a100_80gb-x");
  CHECK(upper("sigusr1") == "SIGUSR1");
  CHECK(lower("\xc3\x84") == "\xc3\x84"); // bytes beyond ASCII stay as they are
  CHECK(iequals("UP", "up"));
  CHECK_FALSE(iequals("UP", "UPS"));
}

TEST_CASE("text: split, lines and join")
{
  CHECK(split("a||b|", "|") == SV{"a", "", "b", ""});
  CHECK(split("", ",") == SV{""});
  CHECK(split_ws("  a \t b\r ") == SV{"a", "b"});
  CHECK(lines("a \r\nb\n\nc") == SV{"a", "b", "", "c"});
  CHECK(join({"n1", "n2", "n3"}, ",") == "n1,n2,n3");
  CHECK(join({}, ",").empty());
  CHECK(join({"", "x"}, " ") == " x"); // empty items keep their place
  CHECK(shorten("abcdef", 3) == "abc...");
  CHECK(shorten("abc", 3) == "abc");
}

TEST_CASE("next_steps: the reasons line up whatever the commands' lengths")
{
  CHECK(rv::text::next_steps({{"rv logs -f 6a0b06fd", "follow it"}, {"rv ps", "where it stands"}, {"rv x", ""}}) ==
        "next: rv logs -f 6a0b06fd   (follow it)\n"
        "      rv ps                 (where it stands)\n"
        "      rv x\n");
  CHECK(rv::text::next_steps({}).empty());
}
