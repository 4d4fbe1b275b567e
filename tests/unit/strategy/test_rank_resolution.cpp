// Ranking does not follow the order the probes ran in: waits count from one timestamp (the probe
// script's start) and waits within the scheduler's resolution are equal, so SU decides.

#include "strategy/rank.hpp"

#include <doctest/doctest.h>

using namespace rv;

namespace {

model::Strategy strat(const std::string& part, std::int64_t wait, double su)
{
  model::Strategy s;
  s.partition = part;
  s.gpu_type = part;
  s.walltime_s = 3600;
  s.est_wait_s = wait;
  s.est_su = su;
  return s;
}

} // namespace

TEST_CASE("rank: on an idle cluster the cheaper partition wins, whichever was probed first")
{
  // The expensive one was probed first (answer 0 s from the script's start), the cheap one 4 s later.
  auto expensive_first = strategy::rank_strategies({strat("a6000", 0, 211.5), strat("v100", 4, 169.5)}, 8, 60);
  auto cheap_first = strategy::rank_strategies({strat("v100", 0, 169.5), strat("a6000", 4, 211.5)}, 8, 60);
  REQUIRE(expensive_first.kept.size() == 2);
  REQUIRE(cheap_first.kept.size() == 2);
  CHECK(expensive_first.kept[0].partition == "v100");
  CHECK(cheap_first.kept[0].partition == "v100");
  // Whole seconds with no resolution: the earlier answer would win (the old behaviour).
  auto exact = strategy::rank_strategies({strat("a6000", 0, 211.5), strat("v100", 4, 169.5)}, 8, 1);
  CHECK(exact.kept[0].partition == "a6000");
}

TEST_CASE("rank: waits beyond one resolution step still order by wait")
{
  auto r = strategy::rank_strategies({strat("v100", 120, 10), strat("a6000", 59, 500)}, 8, 60);
  CHECK(r.kept[0].partition == "a6000"); // 59 s is step 0, 120 s is step 2
  CHECK(strategy::ranks_before(strat("x", 59, 2), strat("y", 0, 3), 60));
  CHECK_FALSE(strategy::ranks_before(strat("x", 60, 2), strat("y", 0, 3), 60));
}

TEST_CASE("rank: the probes and the queue model never prune each other's strategy")
{
  auto probe = strat("a6000", 1440, 100);
  probe.window_source = model::WindowSource::probe;
  auto queue = strat("a6000", 0, 100);
  queue.window_source = model::WindowSource::queue;
  queue.walltime_s = 1080;
  auto r = strategy::rank_strategies({probe, queue}, 8, 60);
  CHECK(r.kept.size() == 2);
  auto agreed = queue;
  agreed.window_source = model::WindowSource::probe_and_queue;
  auto r2 = strategy::rank_strategies({probe, agreed}, 8, 60);
  CHECK(r2.kept.size() == 1);
}
