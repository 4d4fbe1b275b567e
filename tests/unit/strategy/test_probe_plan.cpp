#include "strategy/probe_plan.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv;
using namespace rv::strategy;

namespace {

Candidate a100_candidate(const std::string& id, std::int64_t full_s)
{
  Candidate c;
  c.id = id;
  c.gpu_type = "a100_80";
  c.partition = "gpu-a100";
  c.gres = "gpu:a100_80:4";
  c.constraint = "gpupod&a100_80gb";
  c.account = "lab's";
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.cpus_per_task = 64;
  c.mem_mb_per_node = 500'000;
  c.probe_full_s = full_s;
  return c;
}

ProbeResult at(std::int64_t walltime_s, std::optional<std::int64_t> start_in_s, std::string message = "ok")
{
  return {walltime_s, start_in_s, std::move(message), false};
}

} // namespace

TEST_CASE("probe policy: the coarse grid stops at the full request")
{
  CHECK(coarse_grid(a100_candidate("c2", 5000), {}) == std::vector<std::int64_t>{1800, 3600, 5000});
  CHECK(coarse_grid(a100_candidate("c1", 86400), {}) ==
        std::vector<std::int64_t>{1800, 3600, 7200, 14400, 28800, 57600, 86400});
}

TEST_CASE("probe windows: thresholds, non-monotonic answers, unknown starts")
{
  std::vector<Candidate> cands{a100_candidate("c1", 14400), a100_candidate("c2", 3600)};
  PlanOptions opts;
  CandidateProbes c1{"c1",
                     {at(1800, 299), // within the 300 s threshold: now
                      at(3600, 301), // later
                      at(7200, 0),   // now again: above the cliff, not trusted
                      {14400, std::nullopt, "Requested time limit is invalid", false}},
                     true};
  auto w = make_windows({c1, {"c9", {at(1800, 0)}, true}}, cands, opts);
  REQUIRE(w.list.size() == 1); // c2 was not probed; c9 is no candidate
  CHECK(w.list[0].probes.size() == 4);
  CHECK(w.list[0].max_now_s == 1800);
  CHECK(w.list[0].now_start_in_s == 299);
  CHECK_FALSE(w.list[0].full_start_in_s);
  CHECK(w.list[0].refused.empty());
  auto has_note = [&](const char* text) {
    return std::any_of(w.list[0].notes.begin(), w.list[0].notes.end(),
                       [&](const auto& n) { return n.find(text) != std::string::npos; });
  };
  CHECK(has_note("non-monotonic"));
  CHECK(has_note("Requested time limit is invalid"));
  CHECK(w.find(rv::model::Shape{"a100_80", "gpu-a100", 2, 4}) == &w.list[0]);

  auto cut = make_windows({{"c1", {at(1800, 5)}, false}}, cands, opts);
  REQUIRE(cut.list.size() == 1);
  CHECK_FALSE(cut.list[0].complete);
  CHECK(make_windows({}, cands, opts).list.empty());
}

TEST_CASE("probe windows: a candidate Slurm refuses outright carries the reason, one refusal among answers does not")
{
  std::vector<Candidate> cands{a100_candidate("c1", 3600)};
  PlanOptions opts;
  CandidateProbes all{"c1",
                      {{1800, std::nullopt, "Invalid node name specified", true},
                       {3600, std::nullopt, "Invalid node name specified", true}},
                      true};
  auto w = make_windows({all}, cands, opts);
  REQUIRE(w.list.size() == 1);
  CHECK(w.list[0].refused == "Invalid node name specified");
  CandidateProbes mixed{"c1", {at(1800, 0), {3600, std::nullopt, "QOSMaxWallDurationPerJobLimit", true}}, true};
  auto m = make_windows({mixed}, cands, opts);
  REQUIRE(m.list.size() == 1);
  CHECK(m.list[0].refused.empty());
  CHECK(m.list[0].max_now_s == 1800);
}
