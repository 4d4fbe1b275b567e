#include "app/planning.hpp"

#include "core/duration.hpp"
#include "slurm/discover.hpp"
#include "slurm/probe.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/queue_plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace rv::app {
namespace {

std::string wait_text(const std::optional<std::int64_t>& s)
{
  return s ? (*s <= 0 ? "now" : "~" + format_human_duration(*s)) : "unknown";
}

} // namespace

Result<strategy::Profile> load_profile(const std::string& path)
{
  if (path.empty()) {
    return strategy::Profile{};
  }
  std::ifstream in(path);
  if (!in) {
    return fail(ErrorCode::config, fmt::format("cannot read site profile {}", path),
                "fix the `profile` setting (rv config show), or see docs/profile.md");
  }
  std::stringstream text;
  text << in.rdbuf();
  auto profile = strategy::parse_profile(text.str());
  if (!profile) {
    profile.error().message = fmt::format("site profile {}: {}", path, profile.error().message);
  }
  return profile;
}

Result<model::Cluster> discover_cluster(proc::Runner& runner)
{
  slurm::DiscoveryQuery query;
  query.user = runner.user();
  auto cluster = slurm::discover(runner, query);
  if (cluster) {
    for (const auto& w : cluster->warnings) {
      spdlog::debug("discovery: {}", w);
    }
  }
  return cluster;
}

Result<slurm::ClusterAndQueue> discover_cluster_and_queue(proc::Runner& runner)
{
  slurm::DiscoveryQuery query;
  query.user = runner.user();
  auto found = slurm::discover_with_queue(runner, query);
  if (found) {
    for (const auto& w : found->cluster.warnings) {
      spdlog::debug("discovery: {}", w);
    }
    for (const auto& n : found->queue.notes) {
      spdlog::debug("queue: {}", n);
    }
    spdlog::debug("queue: {} running and pending jobs read", found->queue.jobs.size());
  }
  return found;
}

Result<strategy::Windows> probe_windows(proc::Runner& runner, const std::vector<strategy::Candidate>& candidates,
                                        const strategy::PlanOptions& options)
{
  std::vector<slurm::ProbeJob> jobs;
  for (const auto& c : candidates) {
    jobs.push_back({c.id,
                    strategy::coarse_grid(c, options),
                    {c.partition, c.nodes, c.cpus_per_task, c.mem_mb_per_node, c.gres, c.constraint, c.account, c.qos,
                     c.exclude}});
  }
  proc::Command probe;
  probe.argv = {"sh", "-s"};
  probe.stdin_data = slurm::probe_script(jobs, {options.now_threshold_s, options.refine_resolution_s, 12});
  probe.timeout = std::chrono::minutes(5);
  RV_TRY(outcome, runner.run(probe));
  if (!outcome.ok() && outcome.out.empty()) {
    return fail(
        ErrorCode::slurm_rejected,
        fmt::format("the backfill probes failed on {} (exit {}): {}", runner.where(), outcome.status(), outcome.err),
        "run with -v; check that sbatch works on the login node");
  }
  auto parsed = slurm::parse_probe_output(outcome.out);
  for (const auto& n : parsed.notes) {
    spdlog::debug("probes: {}", n);
  }
  std::vector<strategy::CandidateProbes> probed;
  for (const auto& c : candidates) {
    strategy::CandidateProbes cp;
    cp.candidate_id = c.id;
    cp.complete = parsed.done.contains(c.id);
    for (const auto& a : parsed.answers) {
      if (a.id == c.id) {
        cp.probes.push_back({a.walltime_s, a.start_in_s, a.message, a.refused});
      }
    }
    probed.push_back(std::move(cp));
  }
  return strategy::make_windows(probed, candidates, options);
}

Result<PlanRun> make_plan(Env& env, const model::JobRequest& request, const strategy::PlanOptions& options)
{
  auto& runner = env.cluster;
  const auto start = env.clock.now();
  PlanRun run;
  run.request = request;
  run.options = options;
  RV_TRY(profile, load_profile(env.settings.profile));
  run.profile = std::move(profile);
  const int trips_before = runner.round_trips();
  const std::string user = runner.user(); // connects first, so that trips count after connecting
  (void)user;
  RV_TRY(found, discover_cluster_and_queue(runner));
  run.cluster = std::move(found.cluster);

  RV_TRY(candidates, strategy::enumerate_candidates(run.cluster, run.profile, request, options));
  strategy::Windows windows;
  if (!candidates.list.empty()) {
    RV_TRY(probed, probe_windows(runner, candidates.list, options));
    windows = std::move(probed);
    for (const auto& w : windows.list) {
      run.probes += static_cast<int>(w.probes.size());
    }
  }
  windows.queue = std::move(found.queue);
  RV_TRY(plan, strategy::plan(run.cluster, run.profile, request, windows, options));
  run.plan = std::move(plan);
  run.round_trips = runner.round_trips() - trips_before;
  run.seconds = std::chrono::duration<double>(env.clock.now() - start).count();
  spdlog::debug("plan: {} round trips, {} probes, {:.2f} s", run.round_trips, run.probes, run.seconds);
  return run;
}

Result<int> dry_run(Env& env, const PlanRun& run)
{
  const bool json = env.json;
  print_plan(env.output, run, json, env.verbosity > 0);
  if (!run.plan.strategies.empty()) {
    return 0;
  }
  if (json) {
    return exit_code_for(ErrorCode::no_strategy);
  }
  auto e = strategy::no_viable_strategy(run.plan);
  if (run.plan.longest_max_time_s == 0) {
    e.message = "no viable strategy for this request: every GPU type was dropped (listed above)";
  }
  return std::unexpected(e);
}

void print_plan(Output& output, const PlanRun& run, bool json, bool verbose)
{
  auto out = [&](const std::string& text) { output.out(text); };
  const auto& plan = run.plan;
  if (json) {
    auto doc = strategy::to_json(plan);
    doc["round_trips"] = run.round_trips;
    doc["probes"] = run.probes;
    doc["seconds"] = run.seconds;
    out(doc.dump(2) + "\n");
    return;
  }
  out(fmt::format("cluster {} (Slurm {}), {} partitions, {} nodes; {} probes in {} round trips, {:.2f} s\n\n",
                  run.cluster.config.cluster_name, run.cluster.config.slurm_version, run.cluster.partitions.size(),
                  run.cluster.nodes.size(), run.probes, run.round_trips, run.seconds));
  out("backfill windows (longest walltime that starts now; start of the full request):\n");
  for (const auto& w : plan.windows) {
    out(fmt::format("  {:<16} {:<12} {}x{:<3} now up to {:<8} full request starts {}\n", w.gpu_type, w.partition,
                    w.nodes, w.gpus_per_node, w.max_now_s > 0 ? format_human_duration(w.max_now_s) : "-",
                    wait_text(w.full_start_in_s)));
  }
  if (auto lines = strategy::describe_queue_windows(plan, verbose); !lines.empty()) {
    out("\nqueue windows (rv's model of the scheduler's queue: GPUs idle now, for how long):\n");
    for (const auto& l : lines) {
      out(l + "\n");
    }
  }
  out("\nstrategies, best first:\n");
  out(fmt::format("  {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>9} {:>10} {:>10}\n", "id", "kind", "type", "partition",
                  "shape", "walltime", "time-min", "wait", "SU"));
  for (const auto& s : plan.strategies) {
    out(fmt::format("  {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>9} {:>10} {:>10.1f}\n", s.id, model::to_string(s.kind),
                    s.gpu_type, s.partition, fmt::format("{}x{}", s.nodes, s.gpus_per_node),
                    format_slurm_time(s.walltime_s), s.time_min_s ? format_slurm_time(s.time_min_s) : "-",
                    wait_text(s.est_wait_s), s.est_su));
    if (verbose) {
      for (const auto& r : s.reasons) {
        out(fmt::format("         {}\n", r));
      }
    }
  }
  if (plan.strategies.empty()) {
    out("  (none)\n");
  }
  if (!plan.rejected.empty()) {
    out("\ndropped:\n");
    for (const auto& r : plan.rejected) {
      out(fmt::format("  {:<16} {:<12} {}\n", r.gpu_type, r.partition, r.reason));
      for (const auto& d : verbose ? r.details : std::vector<std::string>{}) {
        out(fmt::format("  {:<16} {:<12}   {}\n", "", "", d));
      }
    }
  }
  if (verbose && !plan.pruned.empty()) {
    out("\npruned:\n");
    for (const auto& p : plan.pruned) {
      out(fmt::format("  {:<40} {}\n", p.strategy.label, p.reason));
    }
  }
  for (const auto& n : plan.notes) {
    out(fmt::format("note: {}\n", n));
  }
}

} // namespace rv::app
