#include "core/ssh/destination.hpp"

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

TEST_CASE("resolve_endpoint: the ssh config fills in an alias, a user or port in DEST wins")
{
  const SshEndpoint config{"rvtest", "127.0.0.1", 2222}; // HostName, User, Port of `Host rvtb`

  auto e = resolve_endpoint(*parse_destination("rvtb"), config);
  CHECK(e.user == "rvtest");
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == 2222);
  CHECK(e.label() == "rvtest@127.0.0.1:2222");

  e = resolve_endpoint(*parse_destination("alice@rvtb:2200"), config);
  CHECK(e.user == "alice");
  CHECK(e.host == "127.0.0.1");
  CHECK(e.port == 2200);

  e = resolve_endpoint(*parse_destination("bob@rvtb"), config);
  CHECK(e.user == "bob");
  CHECK(e.port == 2222);
}

TEST_CASE("resolve_endpoint without a config: DEST as typed, port 22, an unknown user shown as ?")
{
  auto e = resolve_endpoint(*parse_destination("login.example.edu"), SshEndpoint{"", "", 0});
  CHECK(e.user.empty());
  CHECK(e.host == "login.example.edu");
  CHECK(e.port == 22);
  CHECK(e.label() == "?@login.example.edu:22");

  e = resolve_endpoint(*parse_destination("carol@[::1]:2022"), SshEndpoint{"", "", 22});
  CHECK(e.label() == "carol@::1:2022");
}
