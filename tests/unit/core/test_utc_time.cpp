// The records' one date format: utc_iso and parse_utc_iso.

#include "core/utc_time.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using namespace rv;

TEST_CASE("utc_iso: the form every record keeps, to the second, in UTC")
{
  CHECK(utc_iso(0) == "1970-01-01T00:00:00Z");
  CHECK(utc_iso(1795325862) == "2026-11-22T05:37:42Z");
  CHECK(utc_iso(1800000000) == "2027-01-15T08:00:00Z");
  CHECK(utc_iso(951825599) == "2000-02-29T11:59:59Z"); // a leap day
}

TEST_CASE("parse_utc_iso: utc_iso's form round-trips, what records written before still hold parses")
{
  for (const std::int64_t t : {std::int64_t{0}, std::int64_t{86399}, std::int64_t{951825599}, std::int64_t{1795325862},
                               std::int64_t{4102444800}}) {
    CAPTURE(t);
    const auto back = parse_utc_iso(utc_iso(t));
    REQUIRE(back);
    CHECK(*back == t);
  }
  // Written by the two earlier homes of this format (app/env.cpp's strftime, read by
  // requests.cpp's and prune_requests.cpp's parsers): the same text, the same seconds.
  CHECK(parse_utc_iso("2026-11-22T05:37:42Z") == 1795325862);
  CHECK(parse_utc_iso("2027-01-15T08:00:00Z") == 1800000000);
}

TEST_CASE("parse_utc_iso: anything else is no time")
{
  CHECK_FALSE(parse_utc_iso(""));
  CHECK_FALSE(parse_utc_iso("garbage"));
  CHECK_FALSE(parse_utc_iso("yesterday"));
  CHECK_FALSE(parse_utc_iso("2026-11-22T05:37:42"));   // no Z: a cluster-local time, not a record's
  CHECK_FALSE(parse_utc_iso("2026-11-22 05:37:42Z"));  // a space for the T
  CHECK_FALSE(parse_utc_iso("2026-11-22T05:37:42Zx")); // trailing text
  CHECK_FALSE(parse_utc_iso("2026-13-01T00:00:00Z"));  // month 13
  CHECK_FALSE(parse_utc_iso("2026-02-30T00:00:00Z"));  // 30 February
  CHECK_FALSE(parse_utc_iso("2026-11-22T24:00:00Z"));
  CHECK_FALSE(parse_utc_iso("2026-11-22T05:60:00Z"));
  CHECK_FALSE(parse_utc_iso("2026-1-22T05:37:42Z"));
  CHECK_FALSE(parse_utc_iso("+026-11-22T05:37:42Z"));
}
