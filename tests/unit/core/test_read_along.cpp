// ReadAlong: one more command carried on the first command a caller runs.

#include "core/process/read_along.hpp"

#include "tests/fakes/fake_runner.hpp"

#include <doctest/doctest.h>

using namespace rv;

TEST_CASE("ReadAlong carries its command on the first command only")
{
  test::FakeRunner fake;
  fake.expect_prefix({"squeue"}, test::FakeRunner::reply(0, "q"));
  fake.expect_prefix({"sh", "-c"}, test::FakeRunner::reply(0, "samples"));
  fake.expect_prefix({"scontrol"}, test::FakeRunner::reply(0, "s"));
  proc::Command also;
  also.argv = {"sh", "-c", "tail"};
  proc::ReadAlong along(fake, also);
  proc::Command q;
  q.argv = {"squeue", "-h"};
  auto first = along.run(q);
  REQUIRE(first);
  CHECK(first->out == "q");
  REQUIRE(along.also());
  CHECK(along.also()->out == "samples");
  proc::Command s;
  s.argv = {"scontrol", "show"};
  CHECK(along.run(s)->out == "s");
  CHECK(fake.all_consumed());
  CHECK(fake.unexpected().empty());
}
