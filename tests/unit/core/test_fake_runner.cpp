#include "fakes/fake_runner.hpp"

#include <doctest/doctest.h>

TEST_CASE("fake runner replays its script and flags surprises")
{
  rv::test::FakeRunner r;
  r.expect_prefix({"squeue"}, rv::test::FakeRunner::reply(0, "1|RUNNING\n"));
  rv::proc::Command c;
  c.argv = {"squeue", "-h"};
  auto o = r.run(c);
  REQUIRE(o);
  CHECK(o->out == "1|RUNNING\n");
  CHECK(r.all_consumed());
  c.argv = {"scancel", "1"};
  CHECK_FALSE(r.run(c));
  CHECK(r.unexpected().size() == 1);
}
