// The planner on the cluster discovery reads from the captured 24.11 outputs
// (tests/data/slurm/24.11): what the real QOS limits make of a plan.

#include "strategy/plan.hpp"

#include "unit/captured_cluster.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace rv;
using namespace rv::strategy;

// #27: rvtest's QOS rvlimit has MaxWall 1 day, ada's MaxTime is 2 days: a 36-hour job on ada is
// held by Slurm for ever (QOSMaxWallDurationPerJobLimit), and rv used to plan exactly that.
TEST_CASE("plan on the captured 24.11 cluster: the QOS MaxWall (1 day) caps ada's MaxTime (2 days)")
{
  const auto cluster = testing::captured_cluster_24_11();
  REQUIRE(cluster.limits.default_qos == "rvlimit");
  const auto* ada = cluster.find_partition("ada");
  REQUIRE(ada != nullptr);
  CHECK(ada->max_time_s == 2 * 86400);
  CHECK(cluster.walltime_limit(*ada, "").s == 86400);
  CHECK(cluster.walltime_limit(*ada, "").qos == "rvlimit");
  CHECK(cluster.walltime_limit(*ada, "normal").s == 2 * 86400); // --qos normal: no MaxWall
  const auto* debug = cluster.find_partition("debug");          // 30 minutes: its own MaxTime decides
  REQUIRE(debug != nullptr);
  CHECK(cluster.walltime_limit(*debug, "").s == 1800);
  CHECK(cluster.walltime_limit(*debug, "").qos.empty());

  model::JobRequest req;
  req.gpus = 1;
  req.gpu_type = "l40s";
  req.time_s = 36 * 3600;
  auto p = plan(cluster, Profile{}, req, {});
  REQUIRE(p);
  CHECK(p->strategies.empty());
  auto ada_rejected =
      std::find_if(p->rejected.begin(), p->rejected.end(), [](const auto& r) { return r.partition == "ada"; });
  REQUIRE(ada_rejected != p->rejected.end());
  CHECK(ada_rejected->reason == "--time 1-12:00:00 exceeds QOS rvlimit's MaxWall 1-00:00:00 and checkpointing is off");
  CHECK(p->longest_max_time_s == 86400);
  CHECK(p->longest_qos == "rvlimit");

  req.allow_checkpoint = true;
  auto ck = plan(cluster, Profile{}, req, {});
  REQUIRE(ck);
  REQUIRE_FALSE(ck->strategies.empty());
  for (const auto& s : ck->strategies) {
    CAPTURE(s.label);
    CHECK(s.kind == model::StrategyKind::checkpoint);
    CHECK(s.walltime_s <= 86400);
  }

  // Under --qos normal (no MaxWall) ada's 2 days hold: planned in one piece.
  req.allow_checkpoint = false;
  req.qos = "normal";
  auto normal = plan(cluster, Profile{}, req, {});
  REQUIRE(normal);
  CHECK(std::any_of(normal->strategies.begin(), normal->strategies.end(),
                    [](const auto& s) { return s.partition == "ada" && s.walltime_s == 36 * 3600; }));
}

// Discovery enumerates the candidates once for its probes and hands them to the planner: the plan
// from those candidates is the plan that enumerates them itself.
TEST_CASE("plan from candidates enumerated once is the plan that enumerates them")
{
  const auto cluster = testing::captured_cluster_24_11();
  model::JobRequest req;
  req.gpus = 2;
  req.time_s = 3 * 3600;
  auto cands = enumerate_candidates(cluster, Profile{}, req, {});
  REQUIRE(cands);
  REQUIRE_FALSE(cands->list.empty());
  auto own = plan(cluster, Profile{}, req, {});
  auto handed = plan(cluster, Profile{}, std::move(*cands), req, {});
  REQUIRE(own);
  REQUIRE(handed);
  REQUIRE(own->strategies.size() == handed->strategies.size());
  for (std::size_t i = 0; i < own->strategies.size(); ++i) {
    CHECK(own->strategies[i].label == handed->strategies[i].label);
  }
  CHECK(own->rejected.size() == handed->rejected.size());
  CHECK(own->notes == handed->notes);
}
