// The background rv's work after `rv run` (app/run/after_work.hpp): one backfill interval later,
// one squeue for the request's pending jobs records Slurm's first start estimate, and a job found
// cancelled that never started as cancelled while pending (the censored samples of `rv stats`).

#include "app/run/after_work.hpp"
#include "app/run/launch/submit.hpp"
#include "unit/app/lifecycle_world.hpp"

#include <doctest/doctest.h>

using namespace rv;
using namespace rv::app;
using namespace rv::test::lifecycle;

TEST_CASE("after-work: Slurm's estimate one bf_interval after the submission, a cancelled pending job censored")
{
  World w("after-work");
  expect_prepare(w.cluster);
  expect_sbatch(w.cluster, "101");
  expect_sbatch(w.cluster, "102");
  auto planned = two_strategies();
  planned.cluster.config.bf_interval_s = 2;
  planned.cluster.utc_offset_s = 3600;
  auto launched = submit_request(w.env, planned, "python train.py", "", "run");
  REQUIRE_MESSAGE(launched, launched.error().message);
  const auto submitted = w.clock.epoch_seconds();
  REQUIRE(w.env.after.requests == std::vector<std::string>{launched->rec.id});
  CHECK(w.env.after.bf_interval_s == 2);
  // 101 pends with Slurm's expected start (cluster-local); 102 was cancelled before it ran.
  w.cluster.on([](const auto& a) { return has(a, "squeue"); },
               Cluster::ok("101|PENDING|Resources|gpu-a100||1|2027-01-15T09:05:00|N/A|2:00:00|0:00|N/A|train\n"
                           "102|CANCELLED|None|gpu-v100||1|N/A|N/A|2:00:00|0:00|N/A|train\n"));
  CHECK(run_after_work(w.env, w.env.after) == 1);
  CHECK(w.cluster.done());
  CHECK(w.cluster.unexpected.empty());
  CHECK(w.clock.epoch_seconds() == submitted + 3); // one bf_interval and a second
  auto rec = request_from_json(w.record());
  REQUIRE(rec);
  CHECK(rec->utc_offset_s == 3600);
  CHECK(rec->jobs[0].slurm_estimate == "2027-01-15T09:05:00");
  CHECK(rec->jobs[0].slurm_estimate_at == submitted + 3);
  CHECK(rec->jobs[1].slurm_estimate.empty());
  CHECK(rec->jobs[1].cancelled_pending_at == submitted + 3);
  CHECK(rec->jobs[1].state == slurm::JobState::cancelled);

  // Nothing pending without an estimate any more: no poll at all.
  CHECK(run_after_work(w.env, w.env.after) == 0);
  CHECK(w.cluster.unexpected.empty());
}
