#include "slurm/node_state.hpp"

#include <doctest/doctest.h>

using namespace rv::slurm;

TEST_CASE("parse_node_state reads scontrol's BASE+FLAGS")
{
  auto s = parse_node_state("MIXED+DRAIN");
  CHECK(s.base == "mixed");
  CHECK(s.flags == std::vector<std::string>{"drain"});
  CHECK_FALSE(s.usable);
  CHECK(parse_node_state("IDLE").usable);
  CHECK(parse_node_state("IDLE+DYNAMIC_NORM").usable);
  CHECK(parse_node_state("IDLE+CLOUD+POWERED_DOWN").usable); // cloud nodes power up on demand
  CHECK_FALSE(parse_node_state("DOWN+CLOUD+NOT_RESPONDING").usable);
  CHECK_FALSE(parse_node_state("IDLE+CLOUD+MAINTENANCE+RESERVED").usable);
  CHECK_FALSE(parse_node_state("MIXED+DYNAMIC_NORM+MAINTENANCE+RESERVED+PLANNED").usable);
}

TEST_CASE("parse_node_state reads sinfo's words and suffixes")
{
  auto drained = parse_node_state("drained*");
  CHECK(drained.base == "idle");
  CHECK(drained.flags == std::vector<std::string>{"not_responding", "drain"});
  CHECK_FALSE(drained.usable);
  auto planned = parse_node_state("mixed-");
  CHECK(planned.base == "mixed");
  CHECK(planned.usable);
  CHECK(parse_node_state("mix-").usable);
  CHECK(parse_node_state("idle~").usable);
  CHECK(parse_node_state("alloc").base == "allocated");
  for (const char* bad :
       {"draining@", "drng", "down*", "fail*", "resv", "maint", "inval", "reserved", "n/a", "plnd*"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_node_state(bad).usable);
  }
  CHECK(parse_node_state("completing").usable);
}
