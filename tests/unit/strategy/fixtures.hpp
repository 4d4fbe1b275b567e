#pragma once
// Constructed clusters and profiles for the strategy tests.

#include "core/model/cluster.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/profile.hpp"

#include <fmt/format.h>

#include <string>

namespace rv::test {

inline model::Node gpu_node(const std::string& name, const std::string& part, const std::string& type, int gpus,
                            int cpus, std::int64_t mem_mb, bool usable = true)
{
  model::Node n;
  n.name = name;
  n.partitions = {part};
  n.state = usable ? "idle" : "drained";
  n.usable = usable;
  n.cpus_total = cpus;
  n.mem_mb = mem_mb;
  n.gpus = {{type, gpus}};
  return n;
}

inline model::Partition partition(const std::string& name, std::int64_t max_time_s, int max_nodes = -1)
{
  model::Partition p;
  p.name = name;
  p.max_time_s = max_time_s;
  p.max_nodes = max_nodes;
  return p;
}

// gpu-a100 (4 nodes x 8 a100_80, one drained; weights), gpu-v100 (4 x 4 v100; no weights),
// gpu-mig (1 x 56 1g.10gb; free), gpu-h200 (2 x 8 h200; weights, MaxNodes 1).
inline model::Cluster campus()
{
  model::Cluster c;
  auto a100 = partition("gpu-a100", 3 * 86400, 4);
  a100.billing.present = true;
  a100.billing.cpu = 1.0;
  a100.billing.mem_per_gb = 0.25;
  a100.billing.gpu_by_type["a100_80"] = 100.0;
  auto v100 = partition("gpu-v100", 2 * 86400);
  auto mig = partition("gpu-mig", 3 * 86400);
  auto h200 = partition("gpu-h200", 3 * 86400, 1);
  h200.billing.present = true;
  h200.billing.cpu = 1.0;
  h200.billing.gpu = 200.0;
  c.partitions = {a100, v100, mig, h200};
  for (int i = 0; i < 4; ++i) {
    c.nodes.push_back(gpu_node(fmt::format("a{}", i), "gpu-a100", "a100_80", 8, 128, 1'000'000, i != 3));
    c.nodes.push_back(gpu_node(fmt::format("v{}", i), "gpu-v100", "v100", 4, 40, 384'000));
  }
  c.nodes.push_back(gpu_node("m0", "gpu-mig", "1g.10gb", 56, 64, 512'000));
  c.nodes.push_back(gpu_node("h0", "gpu-h200", "h200", 8, 96, 2'000'000));
  c.nodes.push_back(gpu_node("h1", "gpu-h200", "h200", 8, 96, 2'000'000));
  c.nodes[0].gpus_used = {{"a100_80", 6}};
  return c;
}

inline const char* campus_profile_json()
{
  return R"({
    "_comment": "test profile",
    "su_per_billing_hour": 1.0,
    "default_account": "lab",
    "aliases": {"a100": {"types": ["a100_80"], "constraint": "gpupod&a100_80gb"}, "hopper": "h200", "ampere": {"types": ["a100_80", "h200"]}},
    "types": {
      "a100_80": {"vram_gb": 80, "nvlink": true, "infiniband": true},
      "v100": {"vram_gb": 32, "su_per_gpu_hour": 20.96},
      "1g.10gb": {"vram_gb": 10, "free": true},
      "h200": {"vram_gb": 141}
    }
  })";
}

inline strategy::Profile campus_profile()
{
  return *strategy::parse_profile(campus_profile_json());
}

// Probe output as the script would print it: every candidate starts now up to `window_s`,
// later (in 6 h) above it. NOW is 1000000.
// Probe answers for every candidate: walltimes up to `window_s` start in 30 s, longer ones in 6 h.
inline std::vector<strategy::CandidateProbes> fake_probes(const std::vector<strategy::Candidate>& cands,
                                                          std::int64_t window_s)
{
  std::vector<strategy::CandidateProbes> out;
  for (const auto& c : cands) {
    strategy::CandidateProbes cp;
    cp.candidate_id = c.id;
    cp.complete = true;
    for (std::int64_t w : {std::int64_t{1800}, std::int64_t{3600}, window_s, c.probe_full_s}) {
      if (w > c.probe_full_s) {
        continue;
      }
      cp.probes.push_back({w, w <= window_s ? 30 : 21'600, "sbatch: Job 1 to start at X", false});
    }
    out.push_back(std::move(cp));
  }
  return out;
}

} // namespace rv::test
