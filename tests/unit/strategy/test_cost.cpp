#include "strategy/cost.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace rv;
using namespace rv::strategy;

namespace {

model::Partition weighted()
{
  auto p = test::partition("p", -1);
  p.billing.present = true;
  p.billing.cpu = 1.0;                  // CPU=1.0
  p.billing.mem_per_gb = 0.25;          // Mem=0.25G
  p.billing.gpu = 2.0;                  // GRES/gpu=2.0
  p.billing.gpu_by_type["a100"] = 10.0; // GRES/gpu:a100=10
  return p;
}

} // namespace

TEST_CASE("cost: sum of weighted TRES by default")
{
  model::SchedulerConfig cfg;
  Profile prof;
  prof.su_per_billing_hour = 0.5;
  // 2 nodes x (16 CPUs, 128 GB, 4 a100): cpu 32 + mem 0.25*256=64 + gpu 2*8=16 + a100 10*8=80 = 192
  auto r = su_rate(weighted(), cfg, prof, {2, 16, 128 * 1024, 4, "a100"}, false);
  CHECK(r.method == "weights");
  CHECK(r.billing == doctest::Approx(192));
  CHECK(r.su_per_hour == doctest::Approx(96));
  CHECK(su_for(r, 5400) == doctest::Approx(144));
  // An untyped request is billed for GRES/gpu only.
  auto untyped = su_rate(weighted(), cfg, prof, {1, 1, 0, 1, ""}, false);
  CHECK(untyped.billing == doctest::Approx(3));
}

TEST_CASE("cost: PriorityFlags=MAX_TRES takes the largest weighted TRES")
{
  model::SchedulerConfig cfg;
  cfg.max_tres = true;
  cfg.priority_flags = "MAX_TRES";
  Profile prof;
  // cpu 32, mem 64, gres 16+80=96 -> 96
  auto r = su_rate(weighted(), cfg, prof, {2, 16, 128 * 1024, 4, "a100"}, false);
  CHECK(r.method == "weights MAX_TRES");
  CHECK(r.billing == doctest::Approx(96));
  // Memory-heavy: mem 0.25 * 1000 GB = 250 wins over gres 12 + cpu 8.
  auto mem = su_rate(weighted(), cfg, prof, {1, 8, 1000 * 1024, 1, "a100"}, false);
  CHECK(mem.billing == doctest::Approx(250));
  cfg.priority_flags = "MAX_TRES_GRES";
  auto gres = su_rate(weighted(), cfg, prof, {1, 8, 1000 * 1024, 1, "a100"}, false);
  CHECK(gres.method == "weights MAX_TRES_GRES");
  CHECK(gres.billing == doctest::Approx(262)); // max(8, 250) + 12
}

TEST_CASE("cost: billing fractions are truncated, like Slurm")
{
  auto p = test::partition("p", -1);
  p.billing.present = true;
  p.billing.cpu = 0.3;
  auto r = su_rate(p, {}, {}, {1, 5, 0, 1, ""}, false); // 1.5 -> 1
  CHECK(r.billing == doctest::Approx(1));
}

TEST_CASE("cost: profile rate or CPU count without weights, free types")
{
  auto p = test::partition("p", -1);
  auto prof = test::campus_profile();
  auto rate = su_rate(p, {}, prof, {2, 10, 0, 4, "v100"}, false);
  CHECK(rate.method == "profile rate");
  CHECK(rate.su_per_hour == doctest::Approx(20.96 * 8));
  auto cpu = su_rate(p, {}, prof, {2, 10, 0, 4, "unknown"}, false);
  CHECK(cpu.method == "cpu count");
  CHECK(cpu.billing == doctest::Approx(20));
  auto free = su_rate(weighted(), {}, prof, {1, 2, 0, 1, "a100"}, true);
  CHECK(free.su_per_hour == 0);
}

TEST_CASE("cost: rv cost prices a request on every type, cheapest first")
{
  model::JobRequest req;
  req.gpus = 1;
  req.time_s = 7200;
  auto table = cost_table(test::campus(), test::campus_profile(), req, {});
  REQUIRE(table);
  REQUIRE(table->rows.size() == 4);
  CHECK(table->rows[0].gpu_type == "1g.10gb");
  CHECK(table->rows[0].su == 0);
  CHECK(table->rows[1].gpu_type == "v100");
  CHECK(table->rows[1].su == doctest::Approx(2 * 20.96));
  // a100: 16 CPUs + 0.25 * (1e6/8 MB -> 122.07 GB) + 100 = 146.5 -> 146 per hour
  CHECK(table->rows[2].gpu_type == "a100_80");
  CHECK(table->rows[2].rate.billing == doctest::Approx(146));
  CHECK(table->rows[2].su == doctest::Approx(292));
  auto j = to_json(*table);
  CHECK(j["rows"].size() == 4);

  req.gpu_type = "a100";
  auto one = cost_table(test::campus(), test::campus_profile(), req, {});
  REQUIRE(one);
  CHECK(one->rows.size() == 1);
  req.gpu_type = "a10";
  auto bad = cost_table(test::campus(), test::campus_profile(), req, {});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::usage);
}
