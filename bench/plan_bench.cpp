// rv_bench_plan: the planner on a synthetic cluster of 10,000 nodes and 64 partitions.
// Reports (1) parse + plan: the discovery round trip's text as Slurm 22.05 prints it (sinfo -O,
// scontrol -d -o show node, scontrol -o show partition, show config, the zone) parsed into the
// cluster model, then planned; (2) the plan alone on that model. Probe windows are built
// beforehand (they come from sbatch --test-only, not from the discovery text). Also the process's
// peak RSS. Targets: parse + plan < 50 ms, peak RSS < 50 MB.
// Usage: rv_bench_plan [iterations]

#include "slurm/discover.hpp"
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

const std::vector<std::string> k_types = {"a100_80", "a100_40", "h100", "h200", "l40s", "a6000", "v100", "1g.10gb"};

proc::Outcome ok(std::string out)
{
  proc::Outcome o;
  o.exit_code = 0;
  o.out = std::move(out);
  return o;
}

// The outcomes of slurm::discovery_commands (without sacctmgr) for a synthetic site: eight GPU
// types over `partition_count` partitions, every tenth node in two partitions, every 17th down,
// half the partitions with billing weights: what one discovery round trip brings back.
std::vector<proc::Outcome> synthetic_discovery(int node_count, int partition_count)
{
  std::string sinfo, nodes, parts;
  std::vector<std::vector<int>> members(static_cast<std::size_t>(partition_count));
  for (int i = 0; i < node_count; ++i) {
    const int p = i % partition_count;
    const auto& type = k_types[static_cast<std::size_t>(p) % k_types.size()];
    const int gpus = type == "1g.10gb" ? 28 : (i % 5 == 0 ? 4 : 8);
    const int used = i % (gpus + 1);
    const int cpus = 64 + 32 * (i % 3);
    const long mem = 512'000 + 256'000 * (i % 2);
    const bool down = i % 17 == 0;
    std::vector<int> in = {p};
    if (i % 10 == 0) {
      in.push_back((p + 1) % partition_count); // some nodes belong to two partitions
    }
    std::string part_names;
    for (int q : in) {
      members[static_cast<std::size_t>(q)].push_back(i);
      part_names += fmt::format("{}gpu-{:02}", part_names.empty() ? "" : ",", q);
      sinfo += fmt::format(
          "node{:05}|gpu-{:02}|{}|{}|16/{}/0/{}|{}|131072|gpu:{}:{}(S:0-1)|gpu:{}:{}(IDX:0-{})|gpupod,{}|{}\n", i, q,
          down ? "down*" : "mixed", cpus, cpus - 16, cpus, mem, type, gpus, type, used, std::max(0, used - 1), type,
          down ? "Not responding" : "none");
    }
    nodes += fmt::format(
        "NodeName=node{0:05} Arch=x86_64 CoresPerSocket=32 CPUAlloc=16 CPUEfctv={1} CPUTot={1} CPULoad=0.69 "
        "AvailableFeatures=gpupod,{2} ActiveFeatures=gpupod,{2} Gres=gpu:{2}:{3}(S:0-1) GresDrain=N/A "
        "GresUsed=gpu:{2}:{4}(IDX:0-{5}) NodeAddr=node{0:05} NodeHostName=node{0:05} Version=22.05.8 OS=Linux "
        "RealMemory={6} AllocMem=131072 FreeMem=23086 Sockets=2 Boards=1 State={7} ThreadsPerCore=1 TmpDisk=0 "
        "Weight=1 Owner=N/A MCS_label=N/A Partitions={8} BootTime=2026-11-22T04:31:18 "
        "SlurmdStartTime=2026-11-22T05:20:33 LastBusyTime=2026-11-22T05:20:34 "
        "CfgTRES=cpu={1},mem={6}M,billing=4261,gres/gpu={3},gres/gpu:{2}={3} "
        "AllocTRES=cpu=16,mem=128G,gres/gpu={4},gres/gpu:{2}={4} CapWatts=n/a CurrentWatts=0 AveWatts=0 "
        "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s{9}\n",
        i, cpus, type, gpus, used, std::max(0, used - 1), mem, down ? "DOWN+NOT_RESPONDING" : "MIXED", part_names,
        down ? " Reason=Not responding [slurm@2026-11-22T05:00:00]" : "");
  }
  for (int p = 0; p < partition_count; ++p) {
    const auto& type = k_types[static_cast<std::size_t>(p) % k_types.size()];
    std::string list;
    for (int i : members[static_cast<std::size_t>(p)]) {
      list += fmt::format("{}{:05}", list.empty() ? "" : ",", i);
    }
    parts += fmt::format(
        "PartitionName=gpu-{0:02} AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=NO QoS=N/A "
        "DefaultTime=01:00:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes={1} MaxTime={2} "
        "MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=node[{3}] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
        "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=10000 TotalNodes={4} "
        "SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
        "TRES=cpu=10000,mem=80000G,node={4},billing=99999,gres/gpu=1000{5}\n",
        p, p % 3 == 0 ? "4" : "UNLIMITED", p % 4 == 0 ? "UNLIMITED" : "2-00:00:00", list,
        members[static_cast<std::size_t>(p)].size(),
        p % 2 == 0 ? fmt::format(" TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu:{}={}", type, 50 + p) : "");
  }
  return {ok(std::move(sinfo)),
          ok(std::move(parts)),
          ok(std::move(nodes)),
          ok("ClusterName = synth\nSLURM_VERSION = 22.05.8\nPriorityFlags = MAX_TRES\n"
             "SchedulerParameters = bf_interval=30,bf_max_job_user=5\n"),
          ok("+0000 UTC\n"),
          ok("/usr/share/zoneinfo/Etc/UTC\n"),
          ok("")}; // the container probe: none
}

std::size_t text_bytes(const std::vector<proc::Outcome>& outcomes)
{
  std::size_t n = 0;
  for (const auto& o : outcomes) {
    n += o.out.size();
  }
  return n;
}

double median_of(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  const auto discovery = synthetic_discovery(10'000, 64);
  auto parsed = slurm::parse_discovery(discovery);
  if (!parsed) {
    fmt::print(stderr, "parse_discovery failed: {}\n", parsed.error().message);
    return 1;
  }
  const auto& cluster = *parsed;
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

  std::vector<double> parse_ms, plan_ms, both_ms;
  std::size_t strategies = 0;
  std::size_t rejected = 0;
  std::size_t nodes = 0;
  using ms = std::chrono::duration<double, std::milli>;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto c = slurm::parse_discovery(discovery);
    auto t1 = std::chrono::steady_clock::now();
    if (!c) {
      fmt::print(stderr, "parse_discovery failed: {}\n", c.error().message);
      return 1;
    }
    auto p = strategy::plan(*c, profile, request, windows, opts);
    auto t2 = std::chrono::steady_clock::now();
    if (!p) {
      fmt::print(stderr, "plan failed: {}\n", p.error().message);
      return 1;
    }
    nodes = c->nodes.size();
    strategies = p->strategies.size();
    rejected = p->rejected.size();
    parse_ms.push_back(ms(t1 - t0).count());
    plan_ms.push_back(ms(t2 - t1).count());
    both_ms.push_back(ms(t2 - t0).count());
  }
  // (3) The plan on a busy queue: every GPU node runs two jobs (started up to 2 h ago, limits of
  // 4-24 h), 2,000 jobs pending with planned starts, and every partition's job-end ratios, so each
  // queued strategy gets rv's expected wait (strategy/early_end: k_replays replays of the queue).
  auto busy = cluster;
  std::vector<strategy::CandidateProbes> busy_probes = probed; // Slurm: nothing before 8 h
  for (auto& cp : busy_probes) {
    for (auto& pr : cp.probes) {
      pr.start_in_s = 8 * 3600;
    }
  }
  auto queued = strategy::make_windows(busy_probes, cands->list, opts);
  queued.queue.known = true;
  queued.queue.now_epoch = 1'000'000;
  for (const auto& p : busy.partitions) {
    model::EndRatios r;
    for (std::size_t k = 0; k < r.counts.size(); ++k) {
      r.counts[k] = static_cast<int>(3 + (k * 7 + p.name.size()) % 11);
      r.jobs += r.counts[k];
    }
    busy.end_ratios[p.name] = r;
  }
  int job = 0;
  for (auto& n : busy.nodes) {
    if (n.gpus.empty()) {
      continue;
    }
    n.gpus_used = n.gpus; // every GPU busy: nothing starts now
    const auto& g = n.gpus.front();
    for (int half = 0; half < 2; ++half) {
      model::QueuedJob j;
      j.id = fmt::format("{}", ++job);
      j.running = true;
      j.partition = n.partitions.front();
      j.nodes = {n.name};
      j.gpus_per_node = {{g.type, (g.count + half) / 2}};
      j.gpus_known = true;
      j.start_in_s = -((job * 37) % 7200);
      j.end_in_s = *j.start_in_s + 3600 * (4 + job % 21);
      queued.queue.jobs.push_back(std::move(j));
    }
  }
  for (int i = 0; i < 2000; ++i) {
    const auto& n = busy.nodes[static_cast<std::size_t>(i * 5) % busy.nodes.size()];
    if (n.gpus.empty()) {
      continue;
    }
    model::QueuedJob j;
    j.id = fmt::format("{}", ++job);
    j.partition = n.partitions.front();
    j.nodes = {n.name};
    j.gpus_per_node = {{n.gpus.front().type, 2}};
    j.gpus_known = true;
    j.start_in_s = 600 + (i * 97) % 40'000;
    j.end_in_s = *j.start_in_s + 3600 * (1 + i % 8);
    j.priority = 1000 - i % 1000;
    queued.queue.jobs.push_back(std::move(j));
  }
  auto no_ends = busy; // the same plan without the job-end ratios: the window model alone
  no_ends.end_ratios.clear();
  std::vector<double> window_ms;
  for (int i = 0; i < std::max(3, iterations / 4); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = strategy::plan(no_ends, profile, request, queued, opts);
    window_ms.push_back(ms(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> busy_ms;
  std::size_t expected = 0;
  for (int i = 0; i < std::max(3, iterations / 4); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto p = strategy::plan(busy, profile, request, queued, opts);
    busy_ms.push_back(ms(std::chrono::steady_clock::now() - t0).count());
    if (!p) {
      fmt::print(stderr, "plan on the busy queue failed: {}\n", p.error().message);
      return 1;
    }
    expected = static_cast<std::size_t>(std::count_if(p->strategies.begin(), p->strategies.end(), [](const auto& st) {
      return std::any_of(st.reasons.begin(), st.reasons.end(),
                         [](const std::string& r) { return r.starts_with("expected to start"); });
    }));
  }

  double median = median_of(both_ms);
  double rss_mb = static_cast<double>(peak_rss_kb()) / 1024.0;
  fmt::print(
      "discovery text {:.1f} MB; nodes {}, partitions {}, candidates {}, windows {}, strategies {}, rejected {}\n",
      static_cast<double>(text_bytes(discovery)) / 1e6, nodes, cluster.partitions.size(), cands->list.size(),
      windows.list.size(), strategies, rejected);
  std::sort(both_ms.begin(), both_ms.end());
  fmt::print("parse: median {:.2f} ms; plan: median {:.2f} ms; parse + plan: min {:.2f} ms, median {:.2f} ms, "
             "max {:.2f} ms over {} runs\n",
             median_of(parse_ms), median_of(plan_ms), both_ms.front(), median, both_ms.back(), iterations);
  fmt::print("plan on a busy queue ({} jobs, job-end ratios on every partition): median {:.2f} ms, max {:.2f} ms; "
             "{} strategies with rv's expected wait (without the ratios: median {:.2f} ms)\n",
             queued.queue.jobs.size(), median_of(busy_ms), *std::max_element(busy_ms.begin(), busy_ms.end()), expected,
             median_of(window_ms));
  fmt::print("peak RSS: {:.1f} MB\n", rss_mb);
  const double busy_median = median_of(busy_ms);
  bool pass = median < 50.0 && rss_mb < 50.0 && busy_median < 200.0;
  fmt::print("{} (targets: parse + plan < 50 ms, plan on the busy queue < 200 ms, < 50 MB)\n", pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
