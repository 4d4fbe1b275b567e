#include "core/process/ssh_runner.hpp"

#include <doctest/doctest.h>

using namespace rv::proc;

TEST_CASE("parse_destination splits user, host and port")
{
  auto d = parse_destination("alice@login.example.edu:2222");
  REQUIRE(d);
  CHECK(d->user == "alice");
  CHECK(d->host == "login.example.edu");
  CHECK(d->port == 2222);

  d = parse_destination("cluster-alias");
  REQUIRE(d);
  CHECK(d->user.empty());
  CHECK(d->host == "cluster-alias");
  CHECK(d->port == 0);

  d = parse_destination("bob@[::1]:22");
  REQUIRE(d);
  CHECK(d->host == "::1");
  CHECK(d->port == 22);

  d = parse_destination("fe80::1"); // bare IPv6: no port
  REQUIRE(d);
  CHECK(d->host == "fe80::1");
}

TEST_CASE("parse_destination rejects malformed destinations")
{
  for (const char* bad :
       {"", "@host", "user@", "host:", "host:0", "host:70000", "host:22x", "[::1", "[::1]x", "a b", "host/x"}) {
    CAPTURE(bad);
    auto d = parse_destination(bad);
    REQUIRE_FALSE(d);
    CHECK(d.error().code == rv::ErrorCode::usage);
    CHECK_FALSE(d.error().hint.empty());
  }
}
