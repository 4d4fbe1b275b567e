// `rv ps`: the requests rv submitted, as the local store and Slurm know them.

#include "app/manage/manage.hpp"
#include "app/manage/step_view.hpp"
#include "app/request/lookup.hpp"
#include "app/request/record_view.hpp"
#include "app/run/launch/cluster_race.hpp"
#include "app/run/launch/refanout.hpp"
#include "app/run/study_across.hpp"
#include "app/run/study_run.hpp"
#include "cli/commands.hpp"
#include "core/duration.hpp"
#include "core/printable.hpp"
#include "core/text.hpp"
#include "slurm/pending_reason.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace rv::cli {
using namespace rv::app;
namespace {

// The table holds cluster strings (reasons, node lists, job names) and the user's command: shown
// with control characters escaped (core/printable.hpp).
void out(const std::string& s)
{
  std::fputs(printable(s).c_str(), stdout);
}

struct PsOptions {
  bool all = false;
  std::string key; // REQUEST: that request alone, with its `rv run --in` steps (a study: its tasks)
};

// A study's lines: one with its task counts; with `tasks` (rv ps -a, rv ps REQ) one per task and
// one per worker. What the cluster cannot tell now is one line saying so.
void print_study(Env& env, RequestRecord& r, bool tasks)
{
  if (app::is_study_across(r)) { // across clusters: the coordinator shows the whole study
    const auto coordinator = app::study_coordinator(r);
    if (r.id != coordinator) {
      out(fmt::format("  tasks: part of study {} across clusters (rv ps {})\n", coordinator, coordinator));
      return;
    }
    auto across = app::read_study_across(env, r);
    if (!across) {
      out(fmt::format("  tasks: unknown ({})\n", across.error().message));
      return;
    }
    out(fmt::format("  tasks: {} across {}\n", study_counts_text(across->merged), text::join(across->hosts, ", ")));
    if (tasks) {
      for (const auto& line : app::study_across_lines(*across)) {
        out("  " + line + "\n");
      }
    }
    return;
  }
  auto view = read_study(env, r);
  if (!view) {
    out(fmt::format("  tasks: unknown ({})\n", view.error().message));
    return;
  }
  out(fmt::format("  tasks: {}\n", study_counts_text(*view)));
  if (!tasks) {
    return;
  }
  for (const auto& line : study_task_lines(r, *view)) {
    out("  " + line + "\n");
  }
  for (const auto& j : r.jobs) {
    out(fmt::format("    worker {:<8} {:<9} {:<13} {:<34} {}\n", j.strategy_id, j.job_id.empty() ? "-" : j.job_id,
                    app::state_name(j).empty() ? "?" : app::state_name(j), job_detail(j), j.label));
  }
}

Result<int> run_ps(const PsOptions& opts, Context& ctx)
{
  std::string key = opts.key;
  RV_TRY(real, key.empty() ? ctx.make_env() : ctx.make_env_for_request(key)); // a request: its own cluster
  std::map<std::string, Activity> activity; // the GPU watchdog's verdict per running request
  // A race across clusters that no rv settled (rv died, -f not given) is settled before the list.
  app::settle_open_races(real->env);
  // A study that no rv tends (rv killed, the laptop asleep through its end) gets a background rv.
  app::tend_untended_studies(real->env);
  RV_TRY(shown, list_requests(real->env, opts.all || !key.empty(), &activity));
  std::vector<StepRow> steps;
  if (!key.empty()) {
    std::erase_if(shown, [&](const RequestRecord& r) { return r.id != key; });
    RV_TRY(rows, list_steps(real->env, key));
    steps = std::move(rows);
  }
  auto watchdog = [&](const RequestRecord& r) { return activity.contains(r.id) ? &activity[r.id] : nullptr; };
  if (ctx.global.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : shown) {
      auto j = to_json(r);
      j.erase("plan");
      for (auto& job : j["jobs"]) { // the raw code stays in "reason"
        job["reason_text"] = job.value("reason", "").empty() ? "" : slurm::plain_reason(job.value("reason", ""));
      }
      j["watchdog"] = watchdog(r) ? to_json(*watchdog(r)) : nlohmann::json(nullptr);
      if (!key.empty()) {
        j["steps"] = nlohmann::json::array();
        for (const auto& s : steps) {
          auto sj = to_json(s.step);
          sj["slurm_step"] = s.slurm_step;
          j["steps"].push_back(sj);
        }
      }
      arr.push_back(j);
    }
    print_json(arr);
    return 0;
  }
  if (shown.empty()) {
    out(opts.all ? "no requests\n" : "no active requests (rv ps -a lists finished ones)\n");
    return 0;
  }
  // The cluster column (ux-review-3 N9): its ClusterName, else the alias or login node it went to.
  std::size_t cluster_width = 7;
  for (const auto& r : shown) {
    cluster_width = std::max(cluster_width, std::min<std::size_t>(r.cluster_label().size(), 24));
  }
  out(fmt::format("{:<10} {:<16} {:<{}} {:<10} {:<21} {}\n", "REQUEST", "NAME", "CLUSTER", cluster_width, "STATE",
                  "CREATED", "COMMAND"));
  for (auto& r : shown) {
    auto cmd = r.command.size() > 50 ? r.command.substr(0, 47) + "..." : r.command;
    out(fmt::format("{:<10} {:<16} {:<{}} {:<10} {:<21} {}{}\n", r.id, r.name, text::shorten(r.cluster_label(), 21),
                    cluster_width, state_label(r), r.created_at, cmd, git_label(r)));
    if (!r.study.is_null()) { // a study: one line of counts (docs/studies.md)
      print_study(real->env, r, opts.all || !opts.key.empty());
      continue;
    }
    for (const auto& j : r.jobs) {
      auto detail = job_detail(j);
      if (const auto* a = watchdog(r); a && j.strategy_id == r.winner && !activity_text(*a).empty()) {
        detail += "  " + activity_text(*a); // "a100-1 2h10m  idle 42m"
      }
      out(fmt::format("  {} {:<6} {:<9} {:<13} {:<34} {}\n", j.strategy_id == r.winner ? "*" : " ", j.strategy_id,
                      j.job_id.empty() ? "-" : j.job_id, app::state_name(j).empty() ? "?" : app::state_name(j), detail,
                      j.label));
    }
    for (const auto& line : refanout_lines(r.refanout)) {
      out(fmt::format("  ! {}\n", line)); // nodes that failed this request (docs/preflight.md)
    }
    for (const auto& line : step_lines(steps)) {
      out(fmt::format("  {}\n", line)); // rv run --in steps (rv ps REQUEST)
    }
  }
  return 0;
}

} // namespace

void setup_ps(CLI::App& app, Context& ctx)
{
  auto ps_opts = std::make_shared<PsOptions>();
  auto* ps = app.add_subcommand("ps", "requests and their strategies; reaps losers a killed rv left behind");
  ps->alias("ls");
  ps->add_flag("-a,--all", ps_opts->all, "include finished requests (and a study's tasks)");
  ps->add_option(
      "request", ps_opts->key,
      "one request (id, prefix, job id or name), with its `rv run --in` steps, or a study's tasks and workers");
  ps->callback([&ctx, ps_opts] { ctx.action = [&ctx, ps_opts] { return run_ps(*ps_opts, ctx); }; });
}

} // namespace rv::cli
