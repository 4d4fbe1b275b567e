#include "strategy/enumerate.hpp"
#include "strategy/plan.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::strategy;

namespace {

// Plans with probes faked from the candidates: every shape starts now up to `window_s`.
Plan plan_with_window(const model::Cluster& cluster, const model::JobRequest& req, std::int64_t window_s,
                      const PlanOptions& opts = {})
{
  auto profile = test::campus_profile();
  auto cands = enumerate_candidates(cluster, profile, req, opts);
  REQUIRE(cands);
  auto windows = make_windows(test::fake_probes(cands->list, window_s), cands->list, opts);
  auto p = plan(cluster, profile, req, windows, opts);
  REQUIRE(p);
  return *p;
}

bool has_reason(const Plan& p, const std::string& type, const std::string& needle)
{
  auto says = [&](const std::string& text) { return text.find(needle) != std::string::npos; };
  return std::any_of(p.rejected.begin(), p.rejected.end(), [&](const auto& r) {
    return r.gpu_type == type && (says(r.reason) || std::any_of(r.details.begin(), r.details.end(), says));
  });
}

void check_golden(const std::string& name, const nlohmann::json& actual)
{
  auto path = std::filesystem::path(RV_TEST_DATA_DIR) / "plans" / (name + ".json");
  if (std::getenv("RV_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual.dump(2) << '\n';
  }
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "missing golden file " << path << " (run with RV_UPDATE_GOLDEN=1)");
  std::stringstream text;
  text << in.rdbuf();
  auto expected = nlohmann::json::parse(text.str());
  bool same = expected == actual;
  CHECK_MESSAGE(same, "golden " << path << " differs; diff:\n" << nlohmann::json::diff(expected, actual).dump(1));
}

// What every plan must hold, whatever its golden file says: a regenerated golden cannot hide a
// wrong plan. Written from the request and the cluster, not from the planner's own helpers.
void check_plan_properties(const Plan& p, const model::Cluster& cluster, const model::JobRequest& req)
{
  REQUIRE_FALSE(p.strategies.empty());
  CHECK(p.strategies.size() <= static_cast<std::size_t>(p.width));
  for (std::size_t i = 0; i < p.strategies.size(); ++i) {
    const auto& s = p.strategies[i];
    CAPTURE(s.id);
    CHECK(s.id == "s" + std::to_string(i + 1));
    CHECK(s.total_gpus() == req.gpus); // exactly the GPUs asked for, never more
    CHECK(s.total_time_s == req.time_s);
    CHECK(s.gres == "gpu:" + (s.gpu_type.empty() ? "" : s.gpu_type + ":") + std::to_string(s.gpus_per_node));
    const auto* part = cluster.find_partition(s.partition);
    REQUIRE(part != nullptr);
    if (part->max_time_s >= 0) {
      CHECK(s.walltime_s <= part->max_time_s); // never past MaxTime
    }
    const auto& qos = req.qos.empty() ? cluster.limits.default_qos : req.qos;
    if (auto wall = cluster.limits.qos_max_wall_s.find(qos); wall != cluster.limits.qos_max_wall_s.end()) {
      CHECK(s.walltime_s <= wall->second); // nor past the MaxWall of the job's QOS
    }
    if (part->max_nodes >= 0) {
      CHECK(s.nodes <= part->max_nodes);
    }
    // Enough usable nodes of the partition hold gpus_per_node GPUs of the type.
    int fit = 0;
    for (const auto& n : cluster.nodes) {
      bool in_part = std::find(n.partitions.begin(), n.partitions.end(), s.partition) != n.partitions.end();
      bool holds = std::any_of(n.gpus.begin(), n.gpus.end(), [&](const auto& g) {
        return (s.gpu_type.empty() || g.type == s.gpu_type) && g.count >= s.gpus_per_node;
      });
      fit += in_part && n.usable && holds ? 1 : 0;
    }
    CHECK(fit >= s.nodes);
    CHECK(s.cpus_per_task >= 1);
    CHECK(s.mem_mb_per_node > 0);
    if (s.kind == model::StrategyKind::checkpoint) {
      CHECK(req.allow_checkpoint);
      CHECK(s.walltime_s * s.segments >= req.time_s); // the segments cover the work
    } else {
      CHECK(s.segments == 1);
      CHECK(s.walltime_s == req.time_s); // the whole work in one allocation
    }
    if (s.time_min_s > 0) {
      CHECK(req.allow_time_min);
      CHECK(s.kind == model::StrategyKind::time_min);
      CHECK(s.time_min_s <= s.walltime_s);
    }
    if (i > 0) { // ranked by wait (known first), then SU
      const auto& a = p.strategies[i - 1];
      CHECK_FALSE((!a.est_wait_s && s.est_wait_s));
      if (a.est_wait_s && s.est_wait_s) {
        CHECK(*a.est_wait_s <= *s.est_wait_s);
        if (*a.est_wait_s == *s.est_wait_s) {
          CHECK(a.est_su <= s.est_su);
        }
      }
    }
  }
}

} // namespace

TEST_CASE("plan golden: 1 GPU for 2h, any type, 4h backfill window")
{
  model::JobRequest req;
  req.time_s = 7200;
  auto p = plan_with_window(test::campus(), req, 14400);
  check_golden("one_gpu_2h", to_json(p));
  check_plan_properties(p, test::campus(), req);
  REQUIRE(!p.strategies.empty());
  for (const auto& s : p.strategies) {
    CHECK(s.kind == model::StrategyKind::backfill); // 2 h fits the 4 h window
    CHECK(s.est_wait_s == 30);
  }
  CHECK(p.strategies[0].id == "s1");
  CHECK(p.strategies[0].kind == model::StrategyKind::backfill);
}

TEST_CASE("plan golden: 8 GPUs for 4 days, 8h window, time-min allowed")
{
  model::JobRequest req;
  req.gpus = 8;
  req.time_s = 4 * 86400;
  req.allow_time_min = true;
  req.allow_checkpoint = true; // --checkpoint
  auto p = plan_with_window(test::campus(), req, 28800);
  check_golden("eight_gpus_4d", to_json(p));
  check_plan_properties(p, test::campus(), req);
  for (const auto& s : p.strategies) {
    // 4 days do not fit an 8 h window: only checkpoint segments of the window's length.
    CHECK(s.kind == model::StrategyKind::checkpoint);
    CHECK(s.walltime_s == 28800);
  }
}

TEST_CASE("plan: JSON shape has the documented fields")
{
  model::JobRequest req;
  auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE(p);
  auto j = to_json(*p);
  for (const char* key : {"strategies", "windows", "rejected", "pruned", "notes", "width"}) {
    CHECK(j.contains(key));
  }
  REQUIRE(!j["strategies"].empty());
  for (const char* key : {"id", "gpu_type", "partition", "nodes", "gpus_per_node", "kind", "walltime_s", "time_min_s",
                          "est_wait_s", "est_su", "cpus_per_task", "mem_mb", "label", "reasons"}) {
    CHECK(j["strategies"][0].contains(key));
  }
  // Without probes nothing is known about waits: null, never a made-up number.
  for (const auto& s : p->strategies) {
    CHECK_FALSE(s.est_wait_s.has_value());
  }
  CHECK(j["strategies"][0]["est_wait_s"].is_null());
}

TEST_CASE("plan: odd GPU counts are never over-allocated")
{
  for (int gpus : {3, 5, 6, 7, 9, 12}) {
    CAPTURE(gpus);
    model::JobRequest req;
    req.gpus = gpus;
    req.gpu_type = "v100"; // 4 per node, 4 nodes
    auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
    REQUIRE(p);
    for (const auto& s : p->strategies) {
      CHECK(s.nodes * s.gpus_per_node == gpus);
      CHECK(s.gpus_per_node <= 4);
    }
    for (const auto& pr : p->pruned) {
      CHECK(pr.strategy.nodes * pr.strategy.gpus_per_node == gpus);
    }
  }
  model::JobRequest five;
  five.gpus = 5;
  five.gpu_type = "v100";
  auto p = plan(test::campus(), test::campus_profile(), five, {}, {});
  REQUIRE(p);
  // 5 = 5x1 needs 5 nodes and only 4 exist; 1x5 needs 5 GPUs on a 4-GPU node: nothing fits.
  CHECK(p->strategies.empty());
  CHECK(has_reason(*p, "v100", "5 GPUs do not split evenly over 2 nodes"));
  CHECK(has_reason(*p, "v100", "1x5: nodes have at most 4 v100 GPUs"));
  CHECK(has_reason(*p, "v100", "5x1: only 4 usable nodes have 1 GPU"));
  // One line per type, the shapes in details.
  const auto& v =
      *std::find_if(p->rejected.begin(), p->rejected.end(), [](const auto& r) { return r.gpu_type == "v100"; });
  CHECK(v.reason == "no topology fits: 1x5: nodes have at most 4 v100 GPUs (and 4 more shapes; -v lists them)");
  CHECK(v.details.size() == 5);
  model::JobRequest six = five;
  six.gpus = 6;
  auto p6 = plan(test::campus(), test::campus_profile(), six, {}, {});
  REQUIRE(p6);
  check_plan_properties(*p6, test::campus(), six);
  REQUIRE(!p6->strategies.empty());
  CHECK(p6->strategies[0].nodes == 2);
  CHECK(p6->strategies[0].gpus_per_node == 3);
}

TEST_CASE("plan: beyond MaxTime only checkpoint strategies remain")
{
  model::JobRequest req;
  req.gpus = 1;
  req.gpu_type = "a100";
  req.time_s = 5 * 86400; // MaxTime is 3 days
  req.allow_checkpoint = true;
  auto p = plan_with_window(test::campus(), req, 6 * 3600);
  check_plan_properties(p, test::campus(), req);
  REQUIRE(!p.strategies.empty());
  for (const auto& s : p.strategies) {
    CHECK(s.kind == model::StrategyKind::checkpoint);
    CHECK(s.walltime_s == 6 * 3600);
    CHECK(s.total_time_s == 5 * 86400);
    CHECK(s.segments == 21); // 120 h / (6 h - 10 min) = 20.6 -> 21 segments
    CHECK(s.constraint == "gpupod&a100_80gb");
    CHECK(s.est_wait_s == 30);
  }
  // The SU covers the total time, not one segment.
  CHECK(p.strategies[0].est_su == doctest::Approx(146.0 * 120));

  // Without a window the segments are MaxTime long and their wait is the probe's full estimate.
  auto no_window = plan_with_window(test::campus(), req, 0);
  check_plan_properties(no_window, test::campus(), req);
  REQUIRE(no_window.strategies.size() == 1);
  CHECK(no_window.strategies[0].walltime_s == 3 * 86400);
  CHECK(no_window.strategies[0].est_wait_s == 21600);

  req.allow_checkpoint = false;
  auto off = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE(off);
  CHECK(off->strategies.empty());
  CHECK(has_reason(*off, "a100_80", "exceeds MaxTime 3-00:00:00 and checkpointing is off"));
}

// #27: a QOS MaxWall shorter than the partitions' MaxTime (the 24.11 testbed's rvlimit, 1 day,
// beside ada's 2 days) was ignored: rv planned a --time the QOS leaves pending for ever
// (QOSMaxWallDurationPerJobLimit). The MaxWall that counts is the job's QOS's: --qos, else the
// DefaultQOS; a short QOS the user may also use caps nothing.
TEST_CASE("plan: the MaxWall of the job's QOS caps the walltime below MaxTime, and the error names the QOS")
{
  auto cluster = test::campus(); // MaxTime 2-3 days
  cluster.limits.qos = {"normal", "short"};
  cluster.limits.default_qos = "short";
  cluster.limits.qos_max_wall_s = {{"short", 86400}};
  model::JobRequest req;
  req.gpus = 1;
  req.time_s = 2 * 86400;
  auto p = plan_with_window(cluster, req, 6 * 3600);
  CHECK(p.strategies.empty());
  CHECK(has_reason(p, "a100_80", "--time 2-00:00:00 exceeds QOS short's MaxWall 1-00:00:00 and checkpointing is off"));
  CHECK(p.longest_max_time_s == 86400);
  CHECK(p.longest_qos == "short");
  auto e = no_viable_strategy(p);
  CHECK(e.message == "--time is longer than QOS short allows (MaxWall 1-00:00:00, shorter than the GPU partitions' "
                     "MaxTime) and checkpointing is off");
  CHECK(e.hint.find("--time 1-00:00:00 or less") != std::string::npos);

  // Within the MaxWall: planned as before.
  req.time_s = 20 * 3600;
  check_plan_properties(plan_with_window(cluster, req, 6 * 3600), cluster, req);

  // With checkpointing: segments of at most the MaxWall, and the reason says which limit.
  req.time_s = 2 * 86400;
  req.allow_checkpoint = true;
  auto ck = plan_with_window(cluster, req, 0);
  check_plan_properties(ck, cluster, req);
  REQUIRE_FALSE(ck.strategies.empty());
  for (const auto& s : ck.strategies) {
    CHECK(s.kind == model::StrategyKind::checkpoint);
    CHECK(s.walltime_s == 86400);
    CHECK(std::any_of(s.reasons.begin(), s.reasons.end(), [](const auto& r) {
      return r.find("exceeds QOS short's MaxWall 1-00:00:00: segments of QOS short's MaxWall") != std::string::npos;
    }));
  }

  // --qos normal has no MaxWall: the 2 days fit MaxTime, in one piece.
  req.allow_checkpoint = false;
  req.qos = "normal";
  auto normal = plan_with_window(cluster, req, 6 * 3600);
  check_plan_properties(normal, cluster, req);
  CHECK(normal.longest_qos.empty());

  // Without a DefaultQOS Slurm takes the only QOS allowed, else "normal".
  req.qos.clear();
  cluster.limits.default_qos.clear();
  CHECK_FALSE(plan_with_window(cluster, req, 6 * 3600).strategies.empty()); // normal
  cluster.limits.qos = {"short"};
  CHECK(plan_with_window(cluster, req, 6 * 3600).strategies.empty()); // short, the only one

  // A MaxWall longer than every MaxTime changes nothing: MaxTime is named.
  cluster.limits.qos_max_wall_s = {{"short", 30 * 86400}};
  req.time_s = 99 * 86400;
  auto longer = plan_with_window(cluster, req, 6 * 3600);
  CHECK(longer.longest_max_time_s == 3 * 86400);
  CHECK(longer.longest_qos.empty());
  CHECK(has_reason(longer, "a100_80", "exceeds MaxTime 3-00:00:00"));
}

// #13: `--time 99d` silently became 2-day checkpoint segments, which the program must support.
TEST_CASE("plan: checkpoint segments are opt-in, beyond every MaxTime the error names --checkpoint")
{
  model::JobRequest req; // as `rv run` builds it without --checkpoint
  req.gpus = 1;
  req.time_s = 99 * 86400;
  auto p = plan_with_window(test::campus(), req, 6 * 3600);
  CHECK(p.strategies.empty());
  CHECK(p.longest_max_time_s == 3 * 86400);
  auto e = no_viable_strategy(p);
  CHECK(e.code == ErrorCode::no_strategy);
  CHECK(e.message == "--time is longer than every GPU partition's MaxTime (the longest is 3-00:00:00) and "
                     "checkpointing is off");
  CHECK(e.hint.find("--checkpoint") != std::string::npos);
  CHECK(e.hint.find("--time 3-00:00:00 or less") != std::string::npos);
  // A CPU-only partition's longer MaxTime is not offered (the 24.11 testbed's `compute`, 7 days).
  auto with_cpu = test::campus();
  with_cpu.partitions.push_back(test::partition("cpu-long", 30 * 86400));
  auto cpu_node = test::gpu_node("c0", "cpu-long", "", 0, 64, 256'000);
  cpu_node.gpus.clear();
  with_cpu.nodes.push_back(cpu_node);
  CHECK(plan_with_window(with_cpu, req, 6 * 3600).longest_max_time_s == 3 * 86400);

  // Within MaxTime no checkpoint strategy appears unless asked for, and nothing is flagged.
  req.time_s = 2 * 86400;
  auto within = plan_with_window(test::campus(), req, 6 * 3600);
  CHECK(within.longest_max_time_s == 0);
  for (const auto& s : within.strategies) {
    CHECK(s.kind != model::StrategyKind::checkpoint);
  }
  req.allow_checkpoint = true;
  auto on = plan_with_window(test::campus(), req, 6 * 3600);
  CHECK(std::any_of(on.strategies.begin(), on.strategies.end(),
                    [](const auto& s) { return s.kind == model::StrategyKind::checkpoint; }));
}

// #24 item 10: every empty plan got "fewer GPUs, a shorter --time or --checkpoint may fit".
TEST_CASE("plan: the no-fit hint follows the cause of the rejections")
{
  Plan p;
  p.rejected = {{"a100", "gpu-a100", "Slurm refuses it: Invalid node name specified", {}},
                {"v100", "gpu-v100", "Slurm refuses it: Invalid node name specified", {}}};
  CHECK(no_fit_hint(p) == "--exclude names a node Slurm does not know (`rv exec sinfo -N` lists them)");
  CHECK(no_viable_strategy(p).hint == no_fit_hint(p));
  p.rejected = {{"a100", "gpu-a100", "VRAM of 'a100' unknown (add types.a100.vram_gb to the site profile)", {}},
                {"v100", "gpu-v100", "not selected by --type a100", {}}};
  CHECK(no_fit_hint(p) == "leave --vram out, or add the types' vram_gb to the site profile");
  p.rejected = {{"a100", "gpu-a100", "QOS gold is not in AllowQos of gpu-a100", {}}};
  CHECK(no_fit_hint(p).find("--qos") != std::string::npos);
  p.rejected = {{"a100", "gpu-a100", "no topology fits: 1x1000: nodes have at most 8 a100 GPUs", {}}};
  CHECK(no_fit_hint(p).find("fewer GPUs") != std::string::npos);
}

TEST_CASE("plan: time-min only when the request allows it")
{
  model::JobRequest req;
  req.gpu_type = "h200";
  req.time_s = 8 * 3600;
  auto off = plan_with_window(test::campus(), req, 2 * 3600);
  check_plan_properties(off, test::campus(), req);
  for (const auto& s : off.strategies) {
    CHECK(s.kind != model::StrategyKind::time_min);
    CHECK(s.time_min_s == 0);
  }
  req.allow_time_min = true;
  auto on = plan_with_window(test::campus(), req, 2 * 3600);
  check_plan_properties(on, test::campus(), req);
  auto it = std::find_if(on.strategies.begin(), on.strategies.end(),
                         [](const auto& s) { return s.kind == model::StrategyKind::time_min; });
  REQUIRE(it != on.strategies.end());
  CHECK(it->time_min_s == 7200);
  CHECK(it->walltime_s == 8 * 3600);
  CHECK(it->est_wait_s == 30);
}

TEST_CASE("plan: unknown --type is a usage error with did-you-mean")
{
  model::JobRequest req;
  req.gpu_type = "a100_8";
  auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE_FALSE(p);
  CHECK(p.error().code == ErrorCode::usage);
  CHECK(p.error().hint.find("did you mean 'a100_80'?") != std::string::npos);
}

TEST_CASE("plan: --vram drops small and unknown types with reasons")
{
  model::JobRequest req;
  req.min_vram_gb = 40;
  auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE(p);
  CHECK(has_reason(*p, "v100", "32 GB VRAM < 40 GB asked"));
  CHECK(has_reason(*p, "1g.10gb", "10 GB VRAM < 40 GB asked"));
  for (const auto& s : p->strategies) {
    CHECK((s.gpu_type == "a100_80" || s.gpu_type == "h200"));
  }
  auto cluster = test::campus();
  cluster.nodes.push_back(test::gpu_node("x0", "gpu-v100", "mystery", 2, 8, 64'000));
  auto q = plan(cluster, test::campus_profile(), req, {}, {});
  REQUIRE(q);
  CHECK(has_reason(*q, "mystery", "VRAM of 'mystery' unknown"));
}

TEST_CASE("plan: per-user caps, MIG rules, usable nodes")
{
  auto cluster = test::campus();
  cluster.limits.max_gpus = 4;
  model::JobRequest req;
  req.gpus = 8;
  auto p = plan(cluster, test::campus_profile(), req, {}, {});
  REQUIRE(p);
  CHECK(p->strategies.empty());
  CHECK(has_reason(*p, "a100_80", "8 GPUs exceed the cluster's per-user GPU limit (4)"));
  CHECK(has_reason(*p, "1g.10gb", "only 1-GPU requests fit"));

  auto profile = test::campus_profile();
  profile.types["h200"].max_gpus_per_user = 2;
  model::JobRequest four;
  four.gpus = 4;
  auto q = plan(test::campus(), profile, four, {}, {});
  REQUIRE(q);
  CHECK(has_reason(*q, "h200", "per-type max_gpus_per_user (2)"));

  model::JobRequest no_mig;
  no_mig.allow_mig = false;
  auto r = plan(test::campus(), test::campus_profile(), no_mig, {}, {});
  REQUIRE(r);
  CHECK(has_reason(*r, "1g.10gb", "MIG is off"));

  // --single-node and MaxNodes: 16 a100 GPUs need 2 nodes; h200 has MaxNodes 1.
  model::JobRequest big;
  big.gpus = 16;
  big.gpu_type = "ampere";
  auto s = plan(test::campus(), test::campus_profile(), big, {}, {});
  REQUIRE(s);
  CHECK(has_reason(*s, "h200", "2x8: 2 nodes exceed MaxNodes 1"));
  REQUIRE(!s->strategies.empty());
  CHECK(s->strategies[0].nodes == 2);
  big.single_node = true;
  auto t = plan(test::campus(), test::campus_profile(), big, {}, {});
  REQUIRE(t);
  CHECK(t->strategies.empty());
  CHECK(has_reason(*t, "a100_80", "--single-node"));
}

TEST_CASE("plan: CPUs and memory from the GPU share, DefCpuPerGPU/DefMemPerGPU, user values")
{
  model::JobRequest req;
  req.gpus = 2;
  req.gpu_type = "a100";
  auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE(p);
  REQUIRE(!p->strategies.empty());
  CHECK(p->strategies[0].cpus_per_task == 32);        // 128 CPUs x 2/8
  CHECK(p->strategies[0].mem_mb_per_node == 250'000); // 1e6 MB x 2/8
  auto cluster = test::campus();
  cluster.partitions[0].def_cpu_per_gpu = 6;
  cluster.partitions[0].def_mem_per_gpu_mb = 65536;
  auto q = plan(cluster, test::campus_profile(), req, {}, {});
  REQUIRE(q);
  CHECK(q->strategies[0].cpus_per_task == 12);
  CHECK(q->strategies[0].mem_mb_per_node == 131072);
  req.cpus_per_task = 7;
  req.mem_mb = 100'000;
  auto r = plan(cluster, test::campus_profile(), req, {}, {});
  REQUIRE(r);
  CHECK(r->strategies[0].cpus_per_task == 7);
  CHECK(r->strategies[0].mem_mb_per_node == 100'000);
  req.cpus_per_task = 500;
  auto s = plan(cluster, test::campus_profile(), req, {}, {});
  REQUIRE(s);
  CHECK(s->strategies.empty());
  CHECK(has_reason(*s, "a100_80", "500 CPUs per node > 128"));
  // MIG-like slices: 2 CPUs / 16G.
  model::JobRequest mig;
  mig.gpu_type = "1g.10gb";
  auto m = plan(test::campus(), test::campus_profile(), mig, {}, {});
  REQUIRE(m);
  REQUIRE(m->strategies.size() == 1);
  CHECK(m->strategies[0].cpus_per_task == 1);      // 64 CPUs / 56 slices -> 1 < 2
  CHECK(m->strategies[0].mem_mb_per_node == 9142); // 512000 / 56 < 16G
  CHECK(m->strategies[0].est_su == 0);
}

TEST_CASE("plan: dominance pruning within a group, width caps from site limits")
{
  auto cluster = test::campus();
  // A second, pricier partition over the same a100 nodes.
  auto dear = cluster.partitions[0];
  dear.name = "gpu-a100-dear";
  dear.billing.gpu_by_type["a100_80"] = 300.0;
  cluster.partitions.push_back(dear);
  for (auto& n : cluster.nodes) {
    if (n.name.starts_with("a")) {
      n.partitions.push_back("gpu-a100-dear");
    }
  }
  model::JobRequest req;
  req.gpu_type = "a100";
  req.time_s = 3600;
  auto p = plan_with_window(cluster, req, 14400);
  REQUIRE(p.strategies.size() == 1);
  CHECK(p.strategies[0].partition == "gpu-a100");
  REQUIRE(p.pruned.size() == 1);
  CHECK(p.pruned[0].strategy.partition == "gpu-a100-dear");
  CHECK(p.pruned[0].reason.find("dominated by") != std::string::npos);

  model::JobRequest any;
  any.time_s = 3600;
  auto wide = plan_with_window(test::campus(), any, 14400);
  CHECK(wide.width == 8);
  auto capped_cluster = test::campus();
  capped_cluster.limits.max_submit_jobs = 5;
  capped_cluster.config.bf_max_job_user = 2;
  auto capped = plan_with_window(capped_cluster, any, 14400);
  CHECK(capped.width == 2);
  CHECK(capped.strategies.size() == 2);
  CHECK(capped.strategies[1].id == "s2");
  CHECK(std::any_of(capped.pruned.begin(), capped.pruned.end(),
                    [](const auto& x) { return x.reason == "beyond the fan-out width of 2"; }));
  CHECK(std::any_of(capped.notes.begin(), capped.notes.end(),
                    [](const auto& n) { return n.find("bf_max_job_user") != std::string::npos; }));
}

TEST_CASE("plan: ranking puts known waits first, then SU")
{
  model::JobRequest req;
  req.time_s = 7200;
  auto p = plan_with_window(test::campus(), req, 3600);
  check_plan_properties(p, test::campus(), req);
  REQUIRE(p.strategies.size() >= 2);
  for (std::size_t i = 1; i < p.strategies.size(); ++i) {
    const auto& a = p.strategies[i - 1];
    const auto& b = p.strategies[i];
    CHECK_FALSE(ranks_before(b, a));
  }
}

TEST_CASE("plan: a GPU count no type can hold says each type's capacity in one short line")
{
  model::JobRequest req;
  req.gpus = 1000;
  auto p = plan(test::campus(), test::campus_profile(), req, {}, {});
  REQUIRE(p);
  CHECK(p->strategies.empty());
  auto reason_of = [&](const std::string& type) {
    auto it = std::find_if(p->rejected.begin(), p->rejected.end(), [&](const auto& r) { return r.gpu_type == type; });
    REQUIRE(it != p->rejected.end());
    return *it;
  };
  // a100_80: 3 usable nodes with 8 (a3 is down; a0 has 6 used but 8 in all); MaxNodes 4.
  CHECK(reason_of("a100_80").reason == "at most 24 a100_80 GPUs in one job (3 nodes x 8); asked for 1000");
  CHECK(reason_of("v100").reason == "at most 16 v100 GPUs in one job (4 nodes x 4); asked for 1000");
  // h200: MaxNodes 1 caps it at one node.
  CHECK(reason_of("h200").reason == "at most 8 h200 GPUs in one job (1 node x 8); asked for 1000");
  for (const auto& r : p->rejected) {
    CHECK_MESSAGE(r.reason.size() < 120, r.reason);
  }
  // The enumeration is kept, for -v and JSON.
  CHECK(reason_of("v100").details.size() >= 5);
  CHECK(to_json(*p)["rejected"][0].contains("details"));
  model::JobRequest one_node = req;
  one_node.gpus = 12;
  one_node.single_node = true;
  auto q = plan(test::campus(), test::campus_profile(), one_node, {}, {});
  REQUIRE(q);
  CHECK(has_reason(*q, "v100", "at most 4 v100 GPUs in one job (1 node x 4); asked for 12"));
}

// #24 item 12: an unknown --qos or -A went to the queue without a word, though discovery knows the
// user's associations (`rv doctor` prints them).
TEST_CASE("plan: a --qos or -A none of the associations names is warned about")
{
  model::Cluster c;
  c.limits.accounts = {"rvacct"};
  c.limits.qos = {"normal"};
  model::JobRequest req;
  req.qos = "nosuchqos";
  req.account = "nosuchacct";
  const auto w = association_warnings(c, req);
  REQUIRE(w.size() == 2);
  CHECK(w[0] == "QOS nosuchqos is not one your associations allow (normal): Slurm may refuse or hold the job");
  CHECK(w[1] == "account nosuchacct is not one of yours (rvacct): Slurm may refuse the job");
  req.qos = "Normal";
  req.account = "rvacct";
  CHECK(association_warnings(c, req).empty());
  CHECK(association_warnings(model::Cluster{}, model::JobRequest{}).empty()); // nothing discovered: no warning
}
