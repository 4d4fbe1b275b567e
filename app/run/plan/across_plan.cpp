#include "app/run/plan/across_plan.hpp"

#include "app/clusters.hpp"

#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>

namespace rv::app {
namespace {

std::vector<strategy::ClusterPlanView> views_of(const std::vector<ClusterRun>& clusters, const Settings& settings)
{
  std::vector<strategy::ClusterPlanView> views;
  for (const auto& c : clusters) {
    views.push_back({c.host, &c.run.plan, settings.su_weight(c.host), settings.su_weights.contains(c.host)});
  }
  return views;
}

// What tells one Slurm cluster from another: its name and its controller.
std::string cluster_identity(const model::SchedulerConfig& config)
{
  if (config.cluster_name.empty()) {
    return {};
  }
  return config.cluster_name + "|" + config.controller;
}

} // namespace

std::vector<LeftOut> drop_same_cluster(std::vector<ClusterRun>& clusters)
{
  std::vector<LeftOut> dropped;
  std::map<std::string, std::string> first_host; // identity -> the host that reached it first
  std::erase_if(clusters, [&](const ClusterRun& c) {
    const auto id = cluster_identity(c.run.cluster.config);
    if (id.empty()) {
      return false;
    }
    auto [it, first] = first_host.emplace(id, c.host);
    if (!first) {
      dropped.push_back({c.host, fmt::format("it reaches cluster {}, as {} does: a cluster is not raced against itself",
                                             c.run.cluster.config.cluster_name, it->second)});
    }
    return !first;
  });
  return dropped;
}

Result<AcrossPlan> make_plans(Env& env, const std::vector<std::string>& hosts, const model::JobRequest& request,
                              const strategy::PlanOptions& options,
                              const std::map<std::string, std::vector<std::string>>& excluded)
{
  const auto start = env.clock.now();
  AcrossPlan out;
  std::optional<Error> first_error;
  const std::function<Result<PlanRun>(Env&)> plan_one = [&](Env& e) {
    auto r = request;
    if (auto it = excluded.find(e.destination); it != excluded.end()) {
      r.exclude_nodes = it->second;
    }
    return make_plan(e, r, options);
  };
  for (auto& c : on_every_cluster(env, hosts, plan_one)) {
    if (!c.result) {
      out.left_out.push_back({c.host, c.result.error().message});
      if (!first_error || c.result.error().code == ErrorCode::interrupted) {
        first_error = c.result.error();
      }
      continue;
    }
    out.clusters.push_back({c.host, c.env, std::move(*c.result)});
  }
  if (interrupt_signal() != 0 || (first_error && first_error->code == ErrorCode::interrupted)) {
    return fail(ErrorCode::interrupted, "interrupted while planning");
  }
  for (auto& d : drop_same_cluster(out.clusters)) {
    out.left_out.push_back(std::move(d));
  }
  if (out.clusters.empty()) {
    std::string why;
    for (const auto& l : out.left_out) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", l.host, l.reason);
    }
    Error e = first_error.value_or(Error{ErrorCode::unreachable, "", ""});
    e.message = fmt::format("no cluster could plan the request ({})", why);
    if (e.hint.empty()) {
      e.hint = "check each host alone: rv --host HOST doctor";
    }
    return std::unexpected(e);
  }
  for (const auto& l : out.left_out) {
    spdlog::warn("cluster {} is left out: {}", l.host, l.reason);
  }
  const auto views = views_of(out.clusters, env.settings);
  out.order = strategy::rank_across(views);
  out.su_note = strategy::su_weight_note(views);
  out.seconds = std::chrono::duration<double>(env.clock.now() - start).count();
  return out;
}

void print_plans(Output& output, const AcrossPlan& plans, bool json, bool verbose)
{
  if (json) {
    nlohmann::json doc;
    doc["clusters"] = nlohmann::json::array();
    for (const auto& c : plans.clusters) {
      doc["clusters"].push_back({{"host", c.host},
                                 {"cluster", c.run.cluster.config.cluster_name},
                                 {"slurm_version", c.run.cluster.config.slurm_version},
                                 {"round_trips", c.run.round_trips},
                                 {"probes", c.run.probes},
                                 {"seconds", c.run.seconds},
                                 {"plan", strategy::to_json(c.run.plan)},
                                 {"container", container_json(c.run)}});
    }
    doc["left_out"] = nlohmann::json::array();
    for (const auto& l : plans.left_out) {
      doc["left_out"].push_back({{"host", l.host}, {"reason", l.reason}});
    }
    doc["strategies"] = nlohmann::json::array();
    for (const auto& p : plans.order) {
      const auto& c = plans.clusters[p.cluster];
      auto s = strategy::to_json(c.run.plan.strategies[p.strategy]);
      s["host"] = c.host;
      s["cluster"] = c.run.cluster.config.cluster_name;
      s["weighted_su"] = p.weighted_su;
      doc["strategies"].push_back(std::move(s));
    }
    doc["notes"] = plans.su_note.empty() ? nlohmann::json::array() : nlohmann::json::array({plans.su_note});
    doc["seconds"] = plans.seconds;
    output.out(doc.dump(2) + "\n");
    return;
  }
  for (const auto& c : plans.clusters) {
    output.out(fmt::format("{}: cluster {} (Slurm {}), {} partitions, {} nodes; {} probes in {} round trip{}, "
                           "{:.2f} s\n",
                           c.host, c.run.cluster.config.cluster_name, c.run.cluster.config.slurm_version,
                           c.run.cluster.partitions.size(), c.run.cluster.nodes.size(), c.run.probes, c.run.round_trips,
                           c.run.round_trips == 1 ? "" : "s", c.run.seconds));
    for (const auto& line : container_lines(c.run)) {
      output.out(fmt::format("{}: {}\n", c.host, text::trim(line)));
    }
  }
  for (const auto& l : plans.left_out) {
    output.out(fmt::format("{}: left out: {}\n", l.host, l.reason));
  }
  output.out(fmt::format("planned on {} cluster{} at once in {:.2f} s\n\nstrategies, best first:\n",
                         plans.clusters.size(), plans.clusters.size() == 1 ? "" : "s", plans.seconds));
  output.out(fmt::format("  {:<10} {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>10} {:>10}\n", "cluster", "id", "kind",
                         "type", "partition", "shape", "walltime", "wait", "SU"));
  for (const auto& p : plans.order) {
    const auto& c = plans.clusters[p.cluster];
    const auto& s = c.run.plan.strategies[p.strategy];
    output.out(fmt::format("  {:<10} {:<4} {:<11} {:<16} {:<12} {:>5} {:>9} {:>10} {:>10.1f}\n", c.host, s.id,
                           model::to_string(s.kind), s.gpu_type, s.partition,
                           fmt::format("{}x{}", s.nodes, s.gpus_per_node), format_slurm_time(s.walltime_s),
                           wait_in_words(s.est_wait_s, 0, true), p.weighted_su));
    if (verbose) {
      for (const auto& r : s.reasons) {
        output.out(fmt::format("         {}\n", r));
      }
    }
  }
  if (plans.order.empty()) {
    output.out("  (none)\n");
  }
  for (const auto& c : plans.clusters) {
    for (const auto& r : c.run.plan.rejected) {
      output.out(fmt::format("dropped on {}: {:<16} {:<12} {}\n", c.host, r.gpu_type, r.partition, r.reason));
    }
  }
  if (!plans.su_note.empty()) {
    output.out(fmt::format("note: {}\n", plans.su_note));
  }
}

Result<int> dry_run_across(Env& env, const AcrossPlan& plans)
{
  print_plans(env.output, plans, env.json, env.verbosity > 0);
  if (plans.strategies() > 0) {
    return 0;
  }
  if (env.json) {
    return exit_code_for(ErrorCode::no_strategy);
  }
  return fail(ErrorCode::no_strategy, "no viable strategy for this request on any cluster (the reasons are above)",
              "try each cluster alone with --dry-run -v");
}

} // namespace rv::app
