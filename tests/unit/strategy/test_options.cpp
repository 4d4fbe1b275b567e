#include "cli/plan_options.hpp"
#include "strategy/options.hpp"

#include <doctest/doctest.h>

using namespace rv::strategy;

TEST_CASE("compress_time: scale 1 keeps every knob")
{
  PlanOptions d;
  auto o = compress_time(d, 1);
  CHECK(o.now_threshold_s == d.now_threshold_s);
  CHECK(o.probe_grid == d.probe_grid);
  CHECK(o.min_segment_s == d.min_segment_s);
}

TEST_CASE("compress_time: 60x divides the time knobs, within what Slurm and the checkpoint template allow")
{
  auto o = compress_time(PlanOptions{}, 60);
  CHECK(o.now_threshold_s == 5);
  CHECK(o.refine_resolution_s == 60); // 600/60 = 10 s, but walltimes are whole minutes
  CHECK(o.min_segment_s == 120);      // 30 s would be below the template's 120 s minimum
  CHECK(o.checkpoint_margin_s == 90); // 60 s signal jitter + 30 s lead
  CHECK(o.probe_grid == std::vector<std::int64_t>{60, 120, 240, 480, 960, 1440, 2880}); // 30 s -> 1 min, deduplicated
  CHECK(o.max_width == PlanOptions{}.max_width);
}

TEST_CASE("to_plan_options: time_scale comes from the config and is validated")
{
  rv::cli::PlanFlags f;
  auto ok = rv::cli::to_plan_options(f, "8", "60");
  REQUIRE(ok);
  CHECK(ok->now_threshold_s == 5);
  CHECK(rv::cli::to_plan_options(f, "8")->now_threshold_s == 300);
  CHECK_FALSE(rv::cli::to_plan_options(f, "8", "0"));
  CHECK_FALSE(rv::cli::to_plan_options(f, "8", "fast"));
}

TEST_CASE("to_request: --gpu is bounded before the planner loops over its divisors")
{
  rv::cli::PlanFlags f;
  f.gpus = 2147483647; // the topology loop's (gpus + k - 1) overflowed int
  auto r = rv::cli::to_request(f, {"acct", "", false});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == rv::ErrorCode::usage);
  CHECK(r.error().message == "--gpu must be at most 100000, not 2147483647");
  f.gpus = 100000;
  CHECK(rv::cli::to_request(f, {"acct", "", false})->gpus == 100000);
}

TEST_CASE("to_request: --cpus is bounded like a node's CPUs from the cluster")
{
  rv::cli::PlanFlags f;
  f.cpus = 16385;
  auto r = rv::cli::to_request(f, {"acct", "", false});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == rv::ErrorCode::usage);
  CHECK(r.error().message == "--cpus must be at most 16384, not 16385");
  f.cpus = 16384;
  CHECK(rv::cli::to_request(f, {"acct", "", false})->cpus_per_task == 16384);
}

TEST_CASE("to_request: the config's account, qos and checkpoint are the defaults, --qos wins")
{
  rv::Config config;
  REQUIRE(config.set("account", "lab1", rv::Origin::file));
  REQUIRE(config.set("qos", "gpu_long", rv::Origin::file));
  REQUIRE(config.set("checkpoint", "true", rv::Origin::environment));
  const auto d = rv::cli::request_defaults(config);
  rv::cli::PlanFlags f;
  auto r = rv::cli::to_request(f, d);
  REQUIRE(r);
  CHECK(r->account == "lab1");
  CHECK(r->qos == "gpu_long"); // the `qos` key was shown by `rv config show` but never read
  CHECK(r->allow_checkpoint);
  f.qos = "debug";
  f.no_checkpoint = true;
  r = rv::cli::to_request(f, d);
  REQUIRE(r);
  CHECK(r->qos == "debug");
  CHECK_FALSE(r->allow_checkpoint);
  CHECK(rv::cli::to_request(rv::cli::PlanFlags{})->qos.empty()); // no config: the partition's QOS
}

// #24 item 12: `-t 2h` (sbatch's time flag) was "unknown GPU type '2h'" after a round trip.
TEST_CASE("to_request: -t with a time says --time")
{
  rv::cli::PlanFlags f;
  f.type = "2h";
  auto r = rv::cli::to_request(f, {});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == rv::ErrorCode::usage);
  CHECK(r.error().message == "-t/--type is the GPU type, and '2h' is a time");
  CHECK(r.error().hint == "did you mean --time 2h? (sbatch's -t is rv's --time)");
  f.type = "a100";
  CHECK(rv::cli::to_request(f, {}));
  f.type = "3g.40gb"; // a MIG profile is a type
  CHECK(rv::cli::to_request(f, {}));
}

TEST_CASE("to_request: --time is rounded up to whole minutes, as Slurm grants it")
{
  rv::cli::PlanFlags f;
  f.time = "1s";
  CHECK(rv::cli::to_request(f, {})->time_s == 60);
  f.time = "90s";
  CHECK(rv::cli::to_request(f, {})->time_s == 120);
  f.time = "2:30"; // MM:SS, as sbatch reads it
  CHECK(rv::cli::to_request(f, {})->time_s == 180);
  f.time = "2h";
  CHECK(rv::cli::to_request(f, {})->time_s == 7200);
  f.time = "45";
  CHECK(rv::cli::to_request(f, {})->time_s == 45 * 60);
}
