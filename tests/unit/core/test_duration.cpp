#include "core/duration.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

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
  // Compound forms sbatch users type (#13): largest unit first.
  CHECK(*parse_duration("1h30m") == 5400);
  CHECK(*parse_duration("2d12h") == 2 * 86400 + 12 * 3600);
  CHECK(*parse_duration("1d2h3m4s") == 86400 + 7200 + 180 + 4);
  CHECK(*parse_duration("1h0.5m") == 3630);
}

TEST_CASE("parse_duration rejects bad values with a usage error")
{
  for (const char* bad : {"", "0h", "0", "2abc", "-1h", "h", "1:99:00", "1.5", "2 h", "1e400h", "400d", "30m1h", "1h1h",
                          "1hm", "h30m", "1h30", "1h 30m", "300d100d"}) {
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

TEST_CASE("parse_duration caps every form at a year, as the unit forms always were")
{
  CHECK(*parse_duration("365d") == 365 * 86400);
  CHECK(*parse_duration("365-00:00:00") == 365 * 86400);
  CHECK(*parse_duration("525600") == 365 * 86400); // bare minutes
  for (const char* long_one : {"366d", "365-00:00:01", "99999999-00:00:00", "8760:00:01", "525601"}) {
    CAPTURE(long_one);
    auto r = parse_duration(long_one);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK(r.error().message == fmt::format("duration '{}' is longer than a year", long_one));
  }
}

TEST_CASE("parse_duration and parse_slurm_time reject numbers that overflow seconds")
{
  // Each multiplication of `((D * 24 + H) * 60 + M) * 60 + S` used to overflow int64.
  for (const char* huge :
       {"9223372036854775807-00:00:00", "106751991167301-00:00:00", "2562047788015216:00:00", "153722867280912931"}) {
    CAPTURE(huge);
    auto r = parse_duration(huge);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == fmt::format("duration '{}' is longer than a year", huge));
    auto t = parse_slurm_time(huge);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == ErrorCode::parse);
    CHECK(t.error().message == fmt::format("Slurm time '{}' is out of range", huge));
  }
  CHECK(*parse_slurm_time("99999999-00:00:00") == 99999999LL * 86400); // Slurm may print long limits
}

TEST_CASE("parse_memory_mb rejects sizes past a pebibyte instead of overflowing")
{
  CHECK(*parse_memory_mb("1024T") == 1024LL * 1024 * 1024);
  for (const char* huge : {"1025T", "99999999999999999999G", "1e300M", "9223372036854775807"}) {
    CAPTURE(huge);
    auto r = parse_memory_mb(huge);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK(r.error().message == fmt::format("memory size '{}' is more than 1024T", huge));
  }
}

// #25: one rule for "a wait in words" (it was written five times, with two thresholds).
TEST_CASE("wait_in_words: now within the threshold, in ~D after it, unknown without an estimate")
{
  CHECK(rv::wait_in_words(0) == "now");
  CHECK(rv::wait_in_words(-5) == "now"); // an estimate already past
  CHECK(rv::wait_in_words(1) == "in ~1s");
  CHECK(rv::wait_in_words(9000) == "in ~2h30m");
  CHECK(rv::wait_in_words(std::nullopt) == "at an unknown time");
  // rv why: the plan's now_threshold_s (a start within it is "now", as the probes call it)
  CHECK(rv::wait_in_words(300, 300) == "now");
  CHECK(rv::wait_in_words(301, 300) == "in ~5m");
  // a table's column
  CHECK(rv::wait_in_words(7200, 0, true) == "~2h");
  CHECK(rv::wait_in_words(std::nullopt, 0, true) == "unknown");
  CHECK(rv::wait_in_words(0, 0, true) == "now");
}
