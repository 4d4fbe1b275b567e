// Predictions that learn: partition biases from past waits, and the correction before ranking.

#include "strategy/history.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::strategy;

namespace {

std::vector<WaitSample> many(const std::string& part, int n, std::int64_t predicted, std::int64_t actual,
                             bool censored = false)
{
  return std::vector<WaitSample>(static_cast<std::size_t>(n), WaitSample{part, predicted, actual, censored});
}

model::Strategy on(const std::string& part, std::optional<std::int64_t> wait)
{
  model::Strategy s;
  s.partition = part;
  s.est_wait_s = wait;
  return s;
}

} // namespace

TEST_CASE("history: a partition whose estimates are always ~8 min too pessimistic is systematic")
{
  auto samples = many("gpu-a6000", 5, 480, 1); // "480 s" for what started in 1 s (issue #12)
  auto more = many("gpu-v100", 2, 0, 900);     // too few samples
  samples.insert(samples.end(), more.begin(), more.end());
  auto b = partition_biases(samples);
  REQUIRE(b.size() == 2);
  CHECK(b[0].partition == "gpu-a6000");
  CHECK(b[0].started == 5);
  CHECK(b[0].median_error_s == -479);
  CHECK(b[0].median_abs_error_s == 479);
  CHECK(b[0].agreement == doctest::Approx(1.0));
  CHECK(b[0].systematic);
  CHECK(b[1].partition == "gpu-v100");
  CHECK_FALSE(b[1].systematic);
  CHECK(b[1].why == "2 samples, fewer than 5");

  std::vector<model::Strategy> s = {on("gpu-a6000", 480), on("gpu-a6000", std::nullopt), on("gpu-v100", 0)};
  std::vector<std::string> notes;
  correct_estimates(s, b, notes);
  CHECK(s[0].est_wait_s == 1);  // corrected, never below 0
  CHECK_FALSE(s[1].est_wait_s); // unknown stays unknown
  CHECK(s[2].est_wait_s == 0);  // not systematic: untouched
  REQUIRE(s[0].reasons.size() == 1);
  CHECK(s[0].reasons[0].starts_with("wait corrected by history: 480 s -> 1 s"));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].starts_with("history: estimates on gpu-a6000 corrected by -7m"));
}

TEST_CASE("history: mixed directions, small errors and censored samples")
{
  SUBCASE("errors both ways: no clear bias")
  {
    auto s = many("p", 3, 0, 600);
    auto t = many("p", 3, 600, 0);
    s.insert(s.end(), t.begin(), t.end());
    auto b = partition_biases(s);
    REQUIRE(b.size() == 1);
    CHECK_FALSE(b[0].systematic);
  }
  SUBCASE("within the resolution: no correction")
  {
    auto b = partition_biases(many("p", 9, 0, 30));
    CHECK_FALSE(b[0].systematic);
    CHECK(b[0].why.find("within 60 s") != std::string::npos);
  }
  SUBCASE("cancelled while pending past the prediction counts as at least that late; sooner says nothing")
  {
    auto s = many("p", 5, 0, 1200, true);       // predicted now, still pending after 20 min
    auto early = many("p", 4, 3600, 100, true); // cancelled long before the predicted start
    s.insert(s.end(), early.begin(), early.end());
    auto b = partition_biases(s);
    REQUIRE(b.size() == 1);
    CHECK(b[0].censored == 5);
    CHECK(b[0].started == 0);
    CHECK(b[0].median_error_s == 1200);
    CHECK(b[0].systematic);
  }
  CHECK(partition_biases({}).empty());
}
