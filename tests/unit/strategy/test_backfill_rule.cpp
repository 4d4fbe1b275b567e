// The backfill rule (strategy/backfill_rule.hpp) replayed on the probes captured on both local
// clusters (testbed/capture_backfill_rule.sh; tests/data/slurm/<version>/backfill_rule/README.md):
// a reservation W s away, probes of W-90 ... W+10 s, with and without --time-min. Each case is
// replayed twice: the rule against what backfill did, and rv's whole window model (squeue, node,
// scheduler settings as rv reads them) against the same outcome where the snapshot holds the
// whole queue.

#include "core/duration.hpp"
#include "core/text.hpp"
#include "slurm/queue.hpp"
#include "slurm/scontrol.hpp"
#include "slurm/text.hpp"
#include "strategy/backfill_rule.hpp"
#include "strategy/queue_plan.hpp"
#include "strategy/window_model.hpp"
#include "unit/test_data.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>

using namespace rv;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p)
{
  return testing::read_data(p);
}

std::int64_t num(const std::string& s)
{
  auto v = slurm::text::to_int(s.substr(0, s.find('.')));
  REQUIRE_MESSAGE(v, "not a number: " << s);
  return *v;
}

// results.tsv: one row per probe, by column name.
std::vector<std::map<std::string, std::string>> results(const fs::path& dir)
{
  std::vector<std::map<std::string, std::string>> out;
  const std::string tsv = read(dir / "results.tsv");
  auto lines = text::split(tsv, "\n");
  REQUIRE(lines.size() > 1);
  auto head = text::split(lines[0], "\t");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      continue;
    }
    auto cells = text::split(lines[i], "\t");
    REQUIRE(cells.size() == head.size());
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; k < head.size(); ++k) {
      row[std::string(head[k])] = std::string(cells[k]);
    }
    out.push_back(std::move(row));
  }
  return out;
}

const char* versions[] = {"22.05", "24.11"};

fs::path rule_dir(const char* version)
{
  return fs::path(RV_TEST_DATA_DIR) / "slurm" / version / "backfill_rule";
}

model::SchedulerConfig scheduler(const fs::path& dir)
{
  auto config = slurm::parse_scontrol_config(read(dir / "scheduler.txt"));
  REQUIRE(config);
  return *config;
}

} // namespace

TEST_CASE("backfill rule: the captured scheduler settings (the ones rv reads)")
{
  for (const char* v : versions) {
    CAPTURE(v);
    auto c = scheduler(rule_dir(v));
    CHECK(c.scheduler_type == "sched/backfill");
    // The testbed's two clusters, as the field has both: first come (22.05), priorities (24.11).
    CHECK(c.priority_type == (std::string(v) == "22.05" ? "priority/basic" : "priority/multifactor"));
    CHECK(c.first_come == (std::string(v) == "22.05"));
    CHECK(c.bf_resolution_s == 60);
    CHECK(c.bf_interval_s == 2);
    CHECK(c.bf_window_min == 1440);
    CHECK(c.bf_min_age_reserve_s == 0);
    CHECK_FALSE(c.bf_continue);
  }
}

TEST_CASE("backfill rule: what backfill did with every captured probe")
{
  for (const char* v : versions) {
    const auto dir = rule_dir(v);
    const auto res = scheduler(dir).bf_resolution_s;
    auto rows = results(dir);
    CHECK(rows.size() >= 24);
    int started = 0;
    int rounding_mattered = 0; // pending although it would end before the unrounded reservation
    for (const auto& r : rows) {
      CAPTURE(v);
      CAPTURE(r.at("case"));
      const bool running = r.at("state") == "RUNNING";
      const auto limit = num(r.at("limit_s")); // the --time-min where time_min is 1
      const auto reservation = num(r.at("reservation_epoch"));
      const auto submit = num(r.at("submit_epoch"));
      // Pending: not even a start at the second of its submission would fit; running: its real start.
      const auto start = running ? num(r.at("start_epoch")) : submit;
      CHECK(strategy::backfill_starts(start, limit, reservation, res) == running);
      // The blocker's planned start as squeue shows it (what rv reads) gives the same answer.
      CHECK(strategy::backfill_starts(start, limit, num(r.at("blocker_start_epoch")), res) == running);
      if (running) {
        ++started;
        CHECK(start - submit <= 2); // the next backfill pass (bf_interval=2)
        if (r.at("time_min") == "1") {
          // --time-min: the limit granted is the minimum, not stretched to the window.
          CHECK(parse_slurm_time(r.at("granted_limit")).value_or(-1) == limit);
        }
      } else if (start + limit < reservation) {
        ++rounding_mattered;
      }
    }
    CHECK(started > 0);
    CHECK(started < static_cast<int>(rows.size()));
    CHECK(rounding_mattered > 0); // the grid, not a margin, decided those
  }
}

TEST_CASE("backfill rule: rv's window model on the queue it would have read before each probe")
{
  // 24.11's snapshots were taken with `squeue -w NODE`, which leaves the pending blocker out
  // (24.11/backfill_rule/README.md): the rule alone is replayed there.
  for (const char* v : {"22.05"}) {
    const auto dir = rule_dir(v);
    model::Cluster base;
    base.config = scheduler(dir);
    auto parts = slurm::parse_scontrol_partitions(read(dir / "scontrol_show_partition.txt"));
    REQUIRE(parts);
    base.partitions = std::move(*parts);
    // The captures' snapshot was read a second before the sbatch (README.md): that is rv's latency.
    const strategy::BackfillTiming timing{base.config.bf_resolution_s, base.config.bf_interval_s, 1};
    int fits = 0;
    for (const auto& r : results(dir)) {
      CAPTURE(v);
      CAPTURE(r.at("case"));
      const fs::path stem = dir / "cases" / r.at("case");
      auto cluster = base;
      auto nodes = slurm::parse_scontrol_nodes(read(stem.string() + ".node"));
      REQUIRE(nodes);
      cluster.nodes = std::move(*nodes);
      REQUIRE(cluster.nodes.size() == 1);
      auto queue = slurm::parse_queue(read(stem.string() + ".date"), read(stem.string() + ".squeue"));
      REQUIRE(queue.known);
      strategy::Candidate c;
      c.id = "c1";
      c.partition = cluster.nodes[0].partitions.at(0);
      c.gpu_type = cluster.nodes[0].gpus.at(0).type;
      c.gpus_per_node = static_cast<int>(num(r.at("gpus")));
      c.probe_full_s = 1800;
      auto qw = strategy::queue_window(cluster, queue, c);
      REQUIRE(qw.idle_now);
      REQUIRE(qw.until_s);
      CHECK(queue.now_epoch + *qw.until_s == num(r.at("blocker_start_epoch")));
      const auto w = strategy::queue_walltime(qw, c, timing);
      const bool model_fits = w >= num(r.at("limit_s"));
      fits += model_fits ? 1 : 0;
      CHECK(model_fits == (r.at("state") == "RUNNING"));
    }
    CHECK(fits > 0);
  }
}

TEST_CASE("backfill rule: the grid, the strict end and the latency")
{
  const strategy::BackfillTiming t{60, 2, 1};
  const std::int64_t grid = 1795752540; // a multiple of 60
  SUBCASE("the issue's window: 177 s of idle GPUs hold a 2-minute segment unless the grid takes too much")
  {
    // The old margin (bf_resolution + 30 s) sized this to 1 minute whatever the phase.
    CHECK(strategy::backfill_longest_limit_s(grid - 177 + 0, 177, t) == 120);  // R on the grid
    CHECK(strategy::backfill_longest_limit_s(grid - 177 + 53, 177, t) == 120); // R 53 s past it
    CHECK(strategy::backfill_longest_limit_s(grid - 177 + 54, 177, t) == 60);  // 54 s past: 123 s room
  }
  SUBCASE("a limit equal to the room does not start")
  {
    CHECK(strategy::backfill_room_s(grid - 123, 123, t) == 120);
    CHECK(strategy::backfill_longest_limit_s(grid - 123, 123, t) == 60);
    CHECK(strategy::backfill_longest_limit_s(grid - 124, 124, t) == 120);
    CHECK_FALSE(strategy::backfill_starts(grid - 120, 120, grid + 59, 60));
    CHECK(strategy::backfill_starts(grid - 121, 120, grid + 59, 60));
  }
  SUBCASE("nothing under a minute")
  {
    CHECK(strategy::backfill_longest_limit_s(grid - 63, 63, t) == 0);
    CHECK(strategy::backfill_longest_limit_s(grid - 30, 30, t) == 0);
  }
  SUBCASE("rv's latency: the trips since the snapshot and one more, in whole seconds")
  {
    CHECK(strategy::measured_latency_s(0.31, 0.2) == 1);
    CHECK(strategy::measured_latency_s(2.4, 1.1) == 4);
    CHECK(strategy::measured_latency_s(0, 0) == 1);
  }
}
