// rv_bench_plan: the planner on a synthetic cluster of 10,000 nodes and 64 partitions.
// Reports the parse-free plan time (cluster model and probe windows built beforehand) and the
// process's peak RSS. Targets: < 50 ms per plan, < 50 MB peak RSS.
// Usage: rv_bench_plan [iterations]

#include "strategy/plan.hpp"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace rv;

model::Cluster synthetic_cluster(int node_count, int partition_count)
{
  const std::vector<std::string> types = {"a100_80", "a100_40", "h100", "h200", "l40s", "a6000", "v100", "1g.10gb"};
  model::Cluster c;
  for (int p = 0; p < partition_count; ++p) {
    model::Partition part;
    part.name = fmt::format("gpu-{:02}", p);
    part.max_time_s = (p % 4 == 0) ? -1 : 2 * 86400;
    part.max_nodes = (p % 3 == 0) ? 4 : -1;
    if (p % 2 == 0) {
      part.billing.present = true;
      part.billing.cpu = 1.0;
      part.billing.mem_per_gb = 0.25;
      part.billing.gpu_by_type[types[static_cast<std::size_t>(p) % types.size()]] = 50.0 + p;
    }
    c.partitions.push_back(std::move(part));
  }
  c.nodes.reserve(static_cast<std::size_t>(node_count));
  for (int i = 0; i < node_count; ++i) {
    model::Node n;
    n.name = fmt::format("node{:05}", i);
    int p = i % partition_count;
    n.partitions = {c.partitions[static_cast<std::size_t>(p)].name};
    if (i % 10 == 0) { // some nodes belong to two partitions
      n.partitions.push_back(c.partitions[static_cast<std::size_t>((p + 1) % partition_count)].name);
    }
    n.state = i % 17 == 0 ? "down" : "mixed";
    n.usable = i % 17 != 0;
    n.cpus_total = 64 + 32 * (i % 3);
    n.mem_mb = 512'000 + 256'000 * (i % 2);
    const auto& type = types[static_cast<std::size_t>(p) % types.size()];
    int gpus = type == "1g.10gb" ? 28 : (i % 5 == 0 ? 4 : 8);
    n.gpus = {{type, gpus}};
    n.gpus_used = {{type, i % (gpus + 1)}};
    n.features = {"gpupod", type};
    c.nodes.push_back(std::move(n));
  }
  c.limits.max_submit_jobs = 50;
  return c;
}

long peak_rss_kb()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

} // namespace

int main(int argc, char** argv)
{
  int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  auto cluster = synthetic_cluster(10'000, 64);
  strategy::Profile profile;
  profile.types["a100_80"].vram_gb = 80;
  profile.aliases["a100"] = {{"a100_80", "a100_40"}, "", ""};
  model::JobRequest request;
  request.gpus = 4;
  request.time_s = 6 * 3600;
  request.allow_time_min = true;
  strategy::PlanOptions opts;

  // Probe windows for every candidate (built outside the timed region): every shape starts now
  // up to 4 h.
  auto cands = strategy::enumerate_candidates(cluster, profile, request, opts);
  if (!cands) {
    fmt::print(stderr, "enumerate failed: {}\n", cands.error().message);
    return 1;
  }
  std::vector<strategy::CandidateProbes> probed;
  for (const auto& c : cands->list) {
    strategy::CandidateProbes cp{c.id, {}, true};
    for (std::int64_t w : strategy::coarse_grid(c, opts)) {
      cp.probes.push_back({w, w <= 14400 ? 0 : 29000, "ok", false});
    }
    probed.push_back(std::move(cp));
  }
  auto windows = strategy::make_windows(probed, cands->list, opts);

  std::vector<double> ms;
  std::size_t strategies = 0;
  std::size_t rejected = 0;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = strategy::plan(cluster, profile, request, windows, opts);
    auto t1 = std::chrono::steady_clock::now();
    if (!p) {
      fmt::print(stderr, "plan failed: {}\n", p.error().message);
      return 1;
    }
    strategies = p->strategies.size();
    rejected = p->rejected.size();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  double rss_mb = static_cast<double>(peak_rss_kb()) / 1024.0;
  fmt::print("nodes 10000, partitions 64, candidates {}, windows {}, strategies {}, rejected {}\n", cands->list.size(),
             windows.list.size(), strategies, rejected);
  fmt::print("plan: min {:.2f} ms, median {:.2f} ms, max {:.2f} ms over {} runs\n", ms.front(), median, ms.back(),
             iterations);
  fmt::print("peak RSS: {:.1f} MB\n", rss_mb);
  bool ok = median < 50.0 && rss_mb < 50.0;
  fmt::print("{} (targets: < 50 ms, < 50 MB)\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
