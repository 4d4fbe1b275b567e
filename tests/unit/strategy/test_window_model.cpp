// rv's window model built from the queue captured on the local cluster with backfill reservations
// in place (tests/data/slurm/22.05/window, testbed/capture_window.sh; its README says the shapes).

#include "slurm/queue.hpp"
#include "slurm/scontrol.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/plan.hpp"
#include "strategy/queue_plan.hpp"
#include "strategy/window_model.hpp"
#include "unit/test_data.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
namespace fs = std::filesystem;

namespace {

const fs::path window_dir = fs::path(RV_TEST_DATA_DIR) / "slurm" / "22.05" / "window";

std::string read(const fs::path& p)
{
  return testing::read_data(p);
}

model::Cluster captured_cluster()
{
  model::Cluster c;
  auto nodes = slurm::parse_scontrol_nodes(read(window_dir / "scontrol_show_node.txt"));
  REQUIRE(nodes);
  c.nodes = std::move(*nodes);
  auto parts = slurm::parse_scontrol_partitions(read(window_dir / "scontrol_show_partition.txt"));
  REQUIRE(parts);
  c.partitions = std::move(*parts);
  auto config = slurm::parse_scontrol_config(read(window_dir.parent_path() / "scontrol_show_config.txt"));
  REQUIRE(config);
  c.config = std::move(*config);
  return c;
}

model::QueueSnapshot captured_queue()
{
  return slurm::parse_queue(read(window_dir / "date.txt"), read(window_dir / "squeue.txt"));
}

// The snapshot's clock: 2026-11-25T10:55:11 UTC (date.txt).
constexpr std::int64_t at_1055_11 = 1795604111;
std::int64_t from_snapshot(int hour, int min, int sec)
{
  return (hour * 3600 + min * 60 + sec) - (10 * 3600 + 55 * 60 + 11);
}

strategy::Candidate candidate(const model::Cluster& c, const std::string& part, const std::string& type, int nodes,
                              int gpn)
{
  strategy::Candidate k;
  k.id = "c-" + part;
  k.partition = part;
  k.gpu_type = type;
  k.nodes = nodes;
  k.gpus_per_node = gpn;
  k.cpus_per_task = 1;
  k.mem_mb_per_node = 1000;
  k.probe_full_s = 86400;
  (void)c;
  return k;
}

} // namespace

TEST_CASE("queue: the captured squeue with reservations reads into running and pending jobs")
{
  auto q = captured_queue();
  REQUIRE(q.known);
  CHECK(q.now_epoch == at_1055_11);
  CHECK(q.notes.empty());
  REQUIRE(q.jobs.size() == 11);
  auto job = [&](const std::string& name) {
    auto it = std::find_if(q.jobs.begin(), q.jobs.end(), [&](const auto& j) { return j.name == name; });
    REQUIRE(it != q.jobs.end());
    return *it;
  };
  auto blk = job("blk6k");
  CHECK_FALSE(blk.running);
  CHECK(blk.nodes == std::vector<std::string>{"a6000-1"}); // %Y: SchedNodeList
  REQUIRE(blk.gpus_known);
  REQUIRE(blk.gpus_per_node.size() == 1);
  CHECK(blk.gpus_per_node[0].type == "a6000");
  CHECK(blk.gpus_per_node[0].count == 8);
  CHECK(blk.start_in_s == from_snapshot(11, 15, 5));
  CHECK(blk.priority == 4294901580);
  CHECK(blk.reason == "Resources");
  auto run = job("run6k-b");
  CHECK(run.running);
  CHECK(run.nodes == std::vector<std::string>{"a6000-1"});
  CHECK(run.end_in_s == from_snapshot(11, 15, 5));
  CHECK(run.start_in_s == from_snapshot(10, 55, 5)); // when it started: 6 s before the snapshot
  auto a100 = job("blka100");
  CHECK(a100.nodes == std::vector<std::string>{"a100-1", "a100-2"});
  CHECK(job("scav").priority < blk.priority);
}

TEST_CASE("queue: an unreadable clock or squeue gives no model, and says why")
{
  auto q = slurm::parse_queue("", read(window_dir / "squeue.txt"));
  CHECK_FALSE(q.known);
  REQUIRE(q.notes.size() == 1);
  CHECK(q.notes[0].find("clock") != std::string::npos);
  proc::Outcome date;
  date.exit_code = 0;
  date.out = "1795604111 +0000\n";
  proc::Outcome sq;
  sq.exit_code = 1;
  sq.err = "squeue: error: Invalid user\n";
  const std::vector<proc::Outcome> answers{date, sq};
  auto failed = slurm::parse_queue(answers);
  CHECK_FALSE(failed.known);
  CHECK(failed.notes.at(0).find("Invalid user") != std::string::npos);
  auto short_answers = slurm::parse_queue(std::span<const proc::Outcome>(answers).first(1));
  CHECK_FALSE(short_answers.known);
  CHECK(short_answers.notes.at(0) == "1 answers to the 2 queue reads: no queue model");
}

TEST_CASE("window model: the captured shapes, each in front of a high-priority reservation")
{
  auto c = captured_cluster();
  auto q = captured_queue();
  auto w = [&](const std::string& part, const std::string& type, int nodes, int gpn) {
    return strategy::queue_window(c, q, candidate(c, part, type, nodes, gpn));
  };
  SUBCASE("gpu-a6000: 4 of 8 idle until blk6k (8 GPUs) starts when run6k-b's limit ends")
  {
    auto a = w("gpu-a6000", "a6000", 1, 4);
    CHECK(a.idle_now);
    CHECK(a.idle_gpus == 4);
    CHECK(a.until_s == from_snapshot(11, 15, 5));
    CHECK(a.node_names == std::vector<std::string>{"a6000-1"});
    CHECK(a.ends_by.find("job 180 (blk6k") != std::string::npos);
    CHECK_FALSE(w("gpu-a6000", "a6000", 1, 5).idle_now);
  }
  SUBCASE("gpu-v100: 1 idle until blkv100")
  {
    auto v = w("gpu-v100", "v100", 1, 1);
    CHECK(v.idle_now);
    CHECK(v.until_s == from_snapshot(11, 10, 5));
    CHECK_FALSE(w("gpu-v100", "v100", 1, 2).idle_now);
  }
  SUBCASE("gpu-h200: 2 idle until blkh200 (3 GPUs) starts, then 1 stays free for ever")
  {
    CHECK(w("gpu-h200", "h200", 1, 2).until_s == from_snapshot(11, 5, 5));
    auto one = w("gpu-h200", "h200", 1, 1);
    CHECK(one.idle_now);
    CHECK_FALSE(one.until_s);
  }
  SUBCASE("gpu-a100: 4 + 4 idle until the 2-node blocker, no node has 8")
  {
    auto two = w("gpu-a100", "a100", 2, 4);
    CHECK(two.idle_now);
    CHECK(two.idle_gpus == 8);
    CHECK(two.until_s == from_snapshot(11, 20, 5));
    CHECK(two.node_names.size() == 2);
    CHECK_FALSE(w("gpu-a100", "a100", 1, 8).idle_now);
    CHECK_FALSE(w("gpu-a100", "a100", 3, 4).idle_now);
  }
  SUBCASE("gpu-mig: idle, nothing queued")
  {
    auto m = w("gpu-mig", "a100_1g.10gb", 1, 1);
    CHECK(m.idle_now);
    CHECK_FALSE(m.until_s);
  }
  SUBCASE("without a queue the model says nothing")
  {
    auto none = strategy::queue_window(c, model::QueueSnapshot{}, candidate(c, "gpu-a6000", "a6000", 1, 4));
    CHECK_FALSE(none.idle_now);
  }
}

TEST_CASE("window model: the blind spot: test-only says 30 min, the queue plans a segment that starts now")
{
  auto c = captured_cluster();
  model::JobRequest req;
  req.gpus = 4;
  req.gpu_type = "a6000";
  req.time_s = 86400;
  req.allow_checkpoint = true;
  // The testbed's compressed time (docs/benchmark-time-to-gpu.md): a 2-minute segment is worth it.
  auto opts = strategy::compress_time({}, 60);
  strategy::Profile profile;
  auto cands = strategy::enumerate_candidates(c, profile, req, opts);
  REQUIRE(cands);
  auto a6000 = std::find_if(cands->list.begin(), cands->list.end(),
                            [](const auto& k) { return k.partition == "gpu-a6000" && k.nodes == 1; });
  REQUIRE(a6000 != cands->list.end());
  // What sbatch --test-only answered for 4 GPUs on gpu-a6000 (sbatch_test_only.a6000_4gpu_*.txt):
  // every walltime, even 1 minute, to start at 11:25:12, 30 minutes on.
  strategy::CandidateProbes cp;
  cp.candidate_id = a6000->id;
  cp.complete = true;
  for (std::int64_t wall : {std::int64_t{60}, std::int64_t{1800}, a6000->probe_full_s}) {
    cp.probes.push_back({wall, from_snapshot(11, 25, 12), "sbatch: Job 185 to start at 2026-11-25T11:25:12", false});
  }
  auto windows = strategy::make_windows({cp}, cands->list, opts);
  REQUIRE(windows.list.size() == 1);
  CHECK(windows.list[0].max_now_s == 0); // the probes see no window

  SUBCASE("probes alone: no strategy starts now on gpu-a6000")
  {
    auto p = strategy::plan(c, profile, req, windows, opts);
    REQUIRE(p);
    for (const auto& s : p->strategies) {
      if (s.partition == "gpu-a6000") {
        CHECK((!s.est_wait_s || *s.est_wait_s > 0));
      }
    }
  }
  SUBCASE("with the queue: a first segment sized to the window starts now, the probes' strategy is kept")
  {
    windows.queue = captured_queue();
    auto p = strategy::plan(c, profile, req, windows, opts);
    REQUIRE(p);
    auto seg = std::find_if(p->strategies.begin(), p->strategies.end(), [](const auto& s) {
      return s.partition == "gpu-a6000" && s.kind == model::StrategyKind::checkpoint &&
             s.window_source == model::WindowSource::queue;
    });
    REQUIRE(seg != p->strategies.end());
    CHECK(seg->est_wait_s == 0);
    // Ends strictly before the reservation (11:15:05, 1194 s on) rounded down to bf_resolution's
    // grid (11:15:00), started by the pass (bf_interval 2 s) after rv's submission (30 s):
    // strategy/backfill_rule.hpp. The old margin (bf_resolution + 30 s) gave 1080.
    CHECK(seg->walltime_s == 1140);
    CHECK(seg->walltime_s + 30 + 2 < from_snapshot(11, 15, 0));
    auto probe_based = std::find_if(p->strategies.begin(), p->strategies.end(), [](const auto& s) {
      return s.partition == "gpu-a6000" && s.window_source == model::WindowSource::probe;
    });
    CHECK(probe_based != p->strategies.end()); // both kept: the race decides
    auto qw = std::find_if(p->queue_windows.begin(), p->queue_windows.end(),
                           [&](const auto& w) { return w.candidate_id == a6000->id; });
    REQUIRE(qw != p->queue_windows.end());
    CHECK(qw->disagreement.find("sbatch --test-only starts nothing now") != std::string::npos);
    CHECK(std::any_of(p->notes.begin(), p->notes.end(),
                      [&](const auto& n) { return n.starts_with("4 a6000 GPUs idle now on gpu-a6000: " + seg->id); }));
    auto j = strategy::to_json(*p);
    CHECK(j["queue_windows"].is_array());
    CHECK(j["rank_resolution_s"] == 60);
    CHECK(j["strategies"][0].contains("window_source"));
  }
  SUBCASE("idle GPUs the flags cannot use are named, with the flag that would")
  {
    req.allow_checkpoint = false;
    req.time_s = 2 * 86400;
    windows.queue = captured_queue();
    auto p = strategy::plan(c, profile, req, windows, opts);
    REQUIRE(p);
    CHECK(std::any_of(p->notes.begin(), p->notes.end(), [](const auto& n) {
      return n.starts_with("4 a6000 GPUs idle now on gpu-a6000: not used") &&
             n.find("--time-min nor --checkpoint") != std::string::npos;
    }));
  }
  SUBCASE("--time-min: the limit may shrink to the window (the minimum is what backfill grants)")
  {
    req.allow_checkpoint = false;
    req.allow_time_min = true;
    req.time_s = 2 * 86400;
    windows.queue = captured_queue();
    auto p = strategy::plan(c, profile, req, windows, opts);
    REQUIRE(p);
    CHECK(std::any_of(p->strategies.begin(), p->strategies.end(), [](const auto& s) {
      return s.partition == "gpu-a6000" && s.kind == model::StrategyKind::time_min && s.time_min_s == 1140 &&
             s.est_wait_s == 0;
    }));
  }
}
