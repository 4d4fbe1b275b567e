#include "core/duration.hpp"

#include <doctest/doctest.h>

using namespace rv;

TEST_CASE("parse_duration accepts the user grammar")
{
  CHECK(*parse_duration("30m") == 1800);
  CHECK(*parse_duration("2h") == 7200);
  CHECK(*parse_duration("1.5h") == 5400);
  CHECK(*parse_duration("3d") == 3 * 86400);
  CHECK(*parse_duration("90s") == 90);
  CHECK(*parse_duration("2:59:00") == 10740);
  CHECK(*parse_duration("1-12:00:00") == 129600);
  CHECK(*parse_duration("05:30") == 330);
  CHECK(*parse_duration("45") == 2700);
}

TEST_CASE("parse_duration rejects bad values with a usage error")
{
  for (const char* bad : {"", "0h", "0", "2abc", "-1h", "h", "1:99:00", "1.5", "2 h", "1e400h", "400d"}) {
    CAPTURE(bad);
    auto r = parse_duration(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
  }
}

TEST_CASE("slurm time format round trip")
{
  CHECK(format_slurm_time(10740) == "02:59:00");
  CHECK(format_slurm_time(129600) == "1-12:00:00");
  CHECK(*parse_slurm_time("2-00:00:00") == 172800);
  CHECK(*parse_slurm_time("UNLIMITED") == -1);
  CHECK(*parse_slurm_time("1:00:00") == 3600);
  CHECK(*parse_slurm_time("30") == 1800);
  CHECK_FALSE(parse_slurm_time("x"));
}

TEST_CASE("parse_memory_mb")
{
  CHECK(*parse_memory_mb("200G") == 204800);
  CHECK(*parse_memory_mb("512M") == 512);
  CHECK(*parse_memory_mb("1.5T") == 1572864);
  CHECK(*parse_memory_mb("4096") == 4096);
  CHECK_FALSE(parse_memory_mb("0G"));
  CHECK_FALSE(parse_memory_mb("-2G"));
  CHECK_FALSE(parse_memory_mb("lots"));
}
