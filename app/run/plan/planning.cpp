#include "app/run/plan/planning.hpp"

#include "app/run/plan/predictions.hpp"
#include "core/container.hpp"
#include "core/duration.hpp"
#include "slurm/discover.hpp"
#include "slurm/probe.hpp"
#include "strategy/backfill_rule.hpp"
#include "strategy/enumerate.hpp"
#include "strategy/probe_plan.hpp"
#include "strategy/queue_plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace rv::app {

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

Result<strategy::Windows> probe_windows(proc::Runner& runner, const std::vector<strategy::Candidate>& candidates,
                                        const strategy::PlanOptions& options, int concurrency)
{
  std::vector<slurm::ProbeJob> jobs;
  for (const auto& c : candidates) {
    jobs.push_back(probe_job(c, options));
  }
  auto probe = probe_command(jobs, options, concurrency);
  RV_TRY(outcome, runner.run(probe));
  RV_TRY(parsed, read_probes(outcome, runner.where()));
  return windows_of(parsed, jobs, candidates, options);
}

Result<PlanRun> make_plan(Env& env, const model::JobRequest& request, const strategy::PlanOptions& options,
                          const std::vector<proc::Command>& riders)
{
  auto& runner = env.cluster;
  const auto start = env.clock.now();
  PlanRun run;
  run.request = request;
  run.options = options;
  RV_TRY(profile, load_profile(env.settings.profile));
  run.profile = std::move(profile);
  const int trips_before = runner.round_trips();
  const auto connect_start = env.clock.now();
  const std::string user = runner.user(); // connects first, so that trips count after connecting
  (void)user;
  const auto connect_s = std::chrono::duration<double>(env.clock.now() - connect_start).count();
  RV_TRY(found, discover_and_probe(env, run.profile, request, options, riders));
  run.cluster = std::move(found.cluster);
  run.probes = found.probes;
  run.cache = found.cache;
  run.times = found.times;
  run.roots = found.roots;
  run.riders = std::move(found.riders);
  run.times.connect_s = connect_s;
  if (request.container) { // before anything is planned or queued: a runtime this cluster can run it with
    RV_TRY(choice,
           choose_container_runtime(env.settings.container_runtime, run.cluster.containers, request.container->image));
    run.container = templates::ContainerRun{*request.container, std::move(choice), false};
  }
  for (const auto& w : strategy::association_warnings(run.cluster, request)) {
    spdlog::warn("{}", w); // before anything is queued (#24 item 12)
  }
  const auto plan_start = env.clock.now();
  auto ranked_options = options; // this host's prediction history corrects biased estimates
  ranked_options.history =
      history_biases(env.requests, {run.cluster.config.cluster_name, runner.where()}, env.clock.epoch_seconds());
  if (run.times.discovery_s > 0) {
    // The queue snapshot came with discovery; the submission is one more trip like it.
    const double since = std::chrono::duration<double>(env.clock.now() - start).count() - run.times.connect_s;
    ranked_options.queue_latency_s =
        strategy::measured_latency_s(since, std::max(run.times.discovery_s, run.times.probes_s));
  }
  RV_TRY(plan,
         strategy::plan(run.cluster, run.profile, std::move(found.candidates), request, found.windows, ranked_options));
  run.plan = std::move(plan);
  run.plan_s = std::chrono::duration<double>(env.clock.now() - plan_start).count();
  run.round_trips = runner.round_trips() - trips_before;
  run.seconds = std::chrono::duration<double>(env.clock.now() - start).count();
  spdlog::debug("plan: {} round trips, {} probes, {:.2f} s: connect {:.3f} s, discovery {:.3f} s{}, probes {:.3f} s, "
                "plan {:.3f} s; discovery cache {}",
                run.round_trips, run.probes, run.seconds, run.times.connect_s, run.times.discovery_s,
                run.times.probes_s == 0 && run.probes > 0 ? " (with the probes)" : "", run.times.probes_s, run.plan_s,
                run.cache);
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

namespace {

// --container in --dry-run: the runtime, why, and the step as the best strategy runs it.
bool plan_gpus(const PlanRun& run)
{
  return run.plan.strategies.empty() || run.plan.strategies.front().gpus_per_node > 0 ||
         !run.plan.strategies.front().gres.empty();
}

bool plan_multi_node(const PlanRun& run)
{
  return !run.plan.strategies.empty() && run.plan.strategies.front().nodes > 1;
}

} // namespace

nlohmann::json container_json(const PlanRun& run)
{
  if (!run.container) {
    return nullptr;
  }
  const auto& c = *run.container;
  return {{"image", c.order.image.text},
          {"runtime", std::string(rv::to_string(c.choice.runtime))},
          {"program", c.choice.program},
          {"why", c.choice.why},
          {"offered", rv::describe(run.cluster.containers)},
          {"step", templates::describe_step(c, plan_gpus(run), plan_multi_node(run))}};
}

std::vector<std::string> container_lines(const PlanRun& run)
{
  if (!run.container) {
    return {};
  }
  const auto& c = *run.container;
  const auto runtime = c.choice.program.empty() ? std::string(rv::to_string(c.choice.runtime)) : c.choice.program;
  return {fmt::format("container {} with {} ({}; the cluster offers {})", c.order.image.text, runtime, c.choice.why,
                      rv::describe(run.cluster.containers)),
          fmt::format("  step: {}", templates::describe_step(c, plan_gpus(run), plan_multi_node(run)))};
}

void print_plan(Output& output, const PlanRun& run, bool json, bool verbose)
{
  auto out = [&](const std::string& text) { output.out(text); };
  const auto& plan = run.plan;
  if (json) {
    auto doc = strategy::to_json(plan);
    doc["cluster"] = run.cluster.config.cluster_name;
    doc["slurm_version"] = run.cluster.config.slurm_version; // from discovery's scontrol show config
    doc["round_trips"] = run.round_trips;
    doc["probes"] = run.probes;
    doc["seconds"] = run.seconds;
    doc["cache"] = run.cache;
    doc["times"] = {{"connect_s", run.times.connect_s},
                    {"discovery_s", run.times.discovery_s},
                    {"probes_s", run.times.probes_s},
                    {"plan_s", run.plan_s}};
    doc["container"] = container_json(run);
    out(doc.dump(2) + "\n");
    return;
  }
  out(fmt::format("cluster {} (Slurm {}), {} partitions, {} nodes; {} probes in {} round trip{}, {:.2f} s\n",
                  run.cluster.config.cluster_name, run.cluster.config.slurm_version, run.cluster.partitions.size(),
                  run.cluster.nodes.size(), run.probes, run.round_trips, run.round_trips == 1 ? "" : "s", run.seconds));
  if (verbose) {
    out(fmt::format("time: connect {:.3f} s, discovery {:.3f} s{}, probes {:.3f} s, plan {:.3f} s; discovery cache "
                    "{}\n",
                    run.times.connect_s, run.times.discovery_s, run.cache == "warm" ? " (the probes ran with it)" : "",
                    run.times.probes_s, run.plan_s, run.cache));
  }
  for (const auto& line : container_lines(run)) {
    out(line + "\n");
  }
  // The windows and the notes are how rv got there: -v shows them (ux-review-3: 38 lines for 5
  // strategies, where the table is what a person reads).
  if (verbose) {
    out("\n");
    out("backfill windows (longest walltime that starts now; start of the full request):\n");
    for (const auto& w : plan.windows) {
      out(fmt::format("  {:<16} {:<12} {}x{:<3} now up to {:<8} full request starts {}\n", w.gpu_type, w.partition,
                      w.nodes, w.gpus_per_node, w.max_now_s > 0 ? format_human_duration(w.max_now_s) : "-",
                      wait_in_words(w.full_start_in_s, 0, true)));
    }
    if (auto lines = strategy::describe_queue_windows(plan, verbose); !lines.empty()) {
      out("\nqueue windows (rv's model of the scheduler's queue: GPUs idle now, for how long):\n");
      for (const auto& l : lines) {
        out(l + "\n");
      }
    }
  }
  out("\nstrategies, best first:\n");
  out(fmt::format("  {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>9} {:>10} {:>10}\n", "id", "kind", "type", "partition",
                  "shape", "walltime", "time-min", "wait", "SU"));
  for (const auto& s : plan.strategies) {
    out(fmt::format("  {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>9} {:>10} {:>10.1f}\n", s.id, model::to_string(s.kind),
                    s.gpu_type, s.partition, fmt::format("{}x{}", s.nodes, s.gpus_per_node),
                    format_slurm_time(s.walltime_s), s.time_min_s ? format_slurm_time(s.time_min_s) : "-",
                    wait_in_words(s.est_wait_s, 0, true), s.est_su));
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
  if (verbose) {
    for (const auto& n : plan.notes) {
      out(fmt::format("note: {}\n", n));
    }
  } else {
    out(fmt::format("(-v adds the backfill and queue windows{})\n",
                    plan.notes.empty()
                        ? std::string()
                        : fmt::format(" and {} note{}", plan.notes.size(), plan.notes.size() == 1 ? "" : "s")));
  }
}

} // namespace rv::app
