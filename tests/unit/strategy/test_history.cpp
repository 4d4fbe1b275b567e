// Predictions that learn: partition biases from past waits, and the correction before ranking.

#include "strategy/history.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::strategy;

namespace {

std::vector<WaitSample> many(const std::string& part, int n, std::int64_t predicted, std::int64_t actual,
                             bool censored = false, const std::string& model = "")
{
  return std::vector<WaitSample>(static_cast<std::size_t>(n),
                                 WaitSample{part, predicted, actual, censored, std::nullopt, model});
}

model::Strategy on(const std::string& part, std::optional<std::int64_t> wait,
                   model::WaitModel estimator = model::WaitModel::none)
{
  model::Strategy s;
  s.partition = part;
  s.est_wait_s = wait;
  s.wait_model = estimator;
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
  SUBCASE("cancelled while pending past the prediction counts as at least that late, sooner says nothing")
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
  SUBCASE("a partition whose only samples were cancelled before their predicted start has no row")
  {
    // Not a row of zeros with a median error of 0 s (`rv stats` showed one; test_fastplan).
    auto s = many("early", 2, 3600, 100, true);
    auto t = many("p", 1, 0, 30);
    s.insert(s.end(), t.begin(), t.end());
    auto b = partition_biases(s);
    REQUIRE(b.size() == 1);
    CHECK(b[0].partition == "p");
  }
  CHECK(partition_biases({}).empty());
}

// #30 item 3: rv's estimates against Slurm's own (squeue --start at submission), per partition.
TEST_CASE("estimate errors: rv's and Slurm's median |error| per partition, censored samples as lower bounds")
{
  std::vector<WaitSample> s = {
      // started: |actual - estimate| for both
      {"a100", 60, 100, false, 400, ""},  // rv 40, Slurm 300
      {"a100", 0, 10, false, 10, ""},     // rv 10, Slurm 0
      {"a100", 120, 100, false, 700, ""}, // rv 20, Slurm 600
      // cancelled while pending after 500 s: informs both estimates below it (error >= 500 - e)
      {"a100", 100, 500, true, 50, ""}, // rv >= 400, Slurm >= 450
      // cancelled at 200 s: rv's 300 s was not yet reached (no information); Slurm's 60 s was
      {"a100", 300, 200, true, 60, ""}, // rv -, Slurm >= 140
      // no Slurm estimate (the job started before squeue showed one): rv's error only
      {"a100", 0, 5, false, std::nullopt, ""}, // rv 5
      // another partition: Slurm's estimate missed by an hour, rv's by a minute
      {"v100", 600, 660, false, 3600 + 660, ""},
  };
  auto e = estimate_errors(s);
  REQUIRE(e.size() == 2);
  CHECK(e[0].partition == "a100");
  CHECK(e[0].rv_samples == 5); // 40 10 20 400 5 -> median 20
  CHECK(e[0].rv_median_abs_s == 20);
  CHECK(e[0].slurm_samples == 5); // 300 0 600 450 140 -> 300
  CHECK(e[0].slurm_median_abs_s == 300);
  CHECK(e[0].paired == 4); // rv 40 10 20 400 -> 20 (lower middle); Slurm 300 0 600 450 -> 300
  CHECK(e[0].rv_paired_median_abs_s == 20);
  CHECK(e[0].slurm_paired_median_abs_s == 300);
  CHECK(e[1].partition == "v100");
  CHECK(e[1].paired == 1);
  CHECK(e[1].rv_paired_median_abs_s == 60);
  CHECK(e[1].slurm_paired_median_abs_s == 3600);
  // A sample cancelled before either estimate informs neither.
  auto none = estimate_errors({{"h200", 900, 100, true, 800, ""}});
  REQUIRE(none.size() == 1);
  CHECK(none[0].rv_samples == 0);
  CHECK(none[0].slurm_samples == 0);
  CHECK(none[0].paired == 0);
  CHECK(none[0].rv_median_abs_s == 0);
}

TEST_CASE("history: each estimator is corrected from its own samples only, samples naming none correct nothing")
{
  // On one partition: Slurm's plan was 10 min too late five times, rv's replays right five times,
  // and five older records that name no estimator were 10 min too early.
  auto samples = many("gpu-v100", 5, 900, 300, false, "plan");
  auto replay = many("gpu-v100", 5, 300, 310, false, "replay-2");
  auto old = many("gpu-v100", 5, 0, 600);
  samples.insert(samples.end(), replay.begin(), replay.end());
  samples.insert(samples.end(), old.begin(), old.end());
  auto b = estimator_biases(samples);
  REQUIRE(b.size() == 2); // plan and replay-2; the unnamed ones make no row
  CHECK(b[0].model == "plan");
  CHECK(b[0].systematic);
  CHECK(b[0].median_error_s == -600);
  CHECK(b[1].model == "replay-2");
  CHECK_FALSE(b[1].systematic);

  std::vector<model::Strategy> s = {on("gpu-v100", 900, model::WaitModel::plan),
                                    on("gpu-v100", 300, model::WaitModel::replay), on("gpu-v100", 900)};
  std::vector<std::string> notes;
  correct_estimates(s, b, notes);
  CHECK(s[0].est_wait_s == 300); // the plan's own bias
  CHECK(s[1].est_wait_s == 300); // the replays were right: untouched
  CHECK(s[2].est_wait_s == 900); // no estimator named: nothing applies
  REQUIRE(s[0].reasons.size() == 1);
  CHECK(s[0].reasons[0].find("for plan's estimates") != std::string::npos);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].starts_with("history: plan estimates on gpu-v100 corrected by -10m"));
  // `rv stats`' partition row counts every sample (15): the errors seen, whatever made them.
  auto all = partition_biases(samples);
  REQUIRE(all.size() == 1);
  CHECK(all[0].started == 15);
}
