// A study's first workers, on one cluster and across (app/run/study_parts.hpp): each cluster's
// pool from its plan (pool_side), and workers that hold a share of the tasks when the plan for
// their longer walltime is expected to do at least as well (keep_longer_if_better).

#include "app/run/study_parts.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rv;
using namespace rv::app;

namespace {

// A cluster with `free` idle v100s of 4 in partition gpu-v100, and a plan of one strategy there:
// a one-GPU v100 job of `walltime_s`, expected to start after `wait_s`.
PlanRun v100_plan(std::int64_t walltime_s, std::int64_t wait_s, int free = 2)
{
  PlanRun p;
  model::Node n;
  n.name = "v100-1";
  n.partitions = {"gpu-v100"};
  n.gpus = {{"v100", 4}};
  n.gpus_used = {{"v100", 4 - free}};
  p.cluster.nodes = {n};
  p.cluster.limits.max_submit_jobs = 32;
  model::Strategy s;
  s.id = "s1";
  s.label = "1x v100";
  s.partition = "gpu-v100";
  s.gpu_type = "v100";
  s.nodes = 1;
  s.gpus_per_node = 1;
  s.walltime_s = walltime_s;
  s.est_wait_s = wait_s;
  s.est_su = static_cast<double>(walltime_s) / 60; // SU per walltime minute
  model::Strategy multi = s;
  multi.id = "s2";
  multi.nodes = 2; // never a worker
  p.plan.strategies = {s, multi};
  return p;
}

study::PoolInput sixteen()
{
  study::PoolInput in;
  in.unfinished = 16;
  return in;
}

} // namespace

TEST_CASE("study pool side: the plan's workers, those dropped, and a pool within the free GPUs the plan saw")
{
  const auto side = study_parts::pool_side(v100_plan(600, 0, 2), 600, sixteen());
  REQUIRE(side.strategies.size() == 1);
  CHECK(side.strategies.front().id == "s1");
  REQUIRE(side.dropped.size() == 1);
  CHECK(side.dropped.front().find("s2") != std::string::npos);
  CHECK(side.pool.submit == std::vector<std::size_t>{0, 0}); // the 2 free v100s, no more
  CHECK(side.planned.plan.strategies.size() == 2);           // the plan kept whole
}

TEST_CASE("study pool side: a worker's walltime for its share of the tasks, in Slurm's minutes")
{
  CHECK(study_parts::first_worker_share(16, 2) == 8);
  CHECK(study_parts::first_worker_share(16, 0) == 16);         // no worker yet: the study is one share
  CHECK(study_parts::first_worker_share(3, 8) == 2);           // at least 2: else no longer plan is worth asking
  CHECK(study_parts::worker_walltime_s(600, 8) == 4800 + 120); // 8 tasks of 10 min and the margin: 82 min
  CHECK(study_parts::worker_walltime_s(10, 2) == 180);         // 140 s: 3 whole minutes
  CHECK(study_parts::worker_walltime_s(10, 2) % 60 == 0);
}

TEST_CASE("study pool side: the longer workers are kept when they start as soon, not when they wait much longer")
{
  const auto in = sixteen();
  // Tasks of 10 min on 2 free v100s where a job waits 2 min to start. Workers of one task each
  // (10 min) against workers of 8 tasks (82 min, 2.5% more SU a task for their margin) that start
  // as soon: the longer ones claim on with no new wait per task.
  auto side = study_parts::pool_side(v100_plan(600, 120), 600, in);
  const auto one_task_score = side.pool.score;
  study_parts::keep_longer_if_better(side, v100_plan(4920, 120), in, 600, 8, 4920);
  CHECK(side.planned.plan.strategies.front().walltime_s == 4920);
  CHECK(side.pool.score <= one_task_score);
  REQUIRE_FALSE(side.pool.notes.empty());
  CHECK(side.pool.notes.back() == "each worker asks for 8 task(s) of time (1h22m): it keeps claiming once started");

  // The longer walltime fits no backfill window: its workers wait 10 hours. One task each is kept.
  auto kept = study_parts::pool_side(v100_plan(600, 120), 600, in);
  study_parts::keep_longer_if_better(kept, v100_plan(4920, 36000), in, 600, 8, 4920);
  CHECK(kept.planned.plan.strategies.front().walltime_s == 600);
  REQUIRE_FALSE(kept.pool.notes.empty());
  CHECK(kept.pool.notes.back().find("workers of one task: the plan for 8 task(s) per worker (1h22m) was expected") ==
        0);

  // The longer plan failed (the cluster did not answer): the pool stays as it was, no note.
  auto failed = study_parts::pool_side(v100_plan(600, 0), 600, in);
  const auto notes = failed.pool.notes.size();
  study_parts::keep_longer_if_better(failed, fail(ErrorCode::unreachable, "the link dropped"), in, 600, 8, 4920);
  CHECK(failed.planned.plan.strategies.front().walltime_s == 600);
  CHECK(failed.pool.notes.size() == notes);
}

TEST_CASE("study pool side: the free GPUs the plan saw are kept in the record for the top-ups")
{
  const auto side = study_parts::pool_side(v100_plan(600, 0, 3), 600, sixteen());
  RequestRecord rec;
  rec.study = {{"workers", {{{"id", "s1"}}, {{"id", "s9"}}}}};
  study_parts::record_slots(rec, side);
  CHECK(rec.study["workers"][0]["slots"] == 3);
  CHECK_FALSE(rec.study["workers"][1].contains("slots")); // not one of the plan's workers
}
