// `rv ps`, `rv stop`, `rv logs`: the requests rv submitted, as the local store and Slurm know them.

#include "cli/commands.hpp"
#include "app/follow.hpp"
#include "app/reap.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "slurm/monitor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace rv::cli {
using namespace rv::app;
namespace {

void out(const std::string& s)
{
  std::fputs(s.c_str(), stdout);
}

Result<std::vector<RequestRecord>> load_requests(const store::RecordStore& store)
{
  std::vector<std::string> skipped;
  RV_TRY(all, store.list(&skipped));
  for (const auto& s : skipped) {
    spdlog::warn("skipping request record {}", s);
  }
  std::vector<RequestRecord> requests;
  for (const auto& j : all) {
    if (auto r = request_from_json(j)) {
      requests.push_back(std::move(*r));
    }
  }
  return requests;
}

// "  [main@3f9c02a*]" from the request's sync record ("*": uncommitted changes), or "".
std::string git_label(const RequestRecord& r)
{
  if (!r.sync.is_object() || !r.sync.contains("git")) {
    return {};
  }
  const auto& g = r.sync["git"];
  return fmt::format("  [{}@{}{}]", g.value("branch", "?"), g.value("commit", "?"), g.value("dirty", false) ? "*" : "");
}

// Where a job is: its node(s) and run time once it has started; else its pending reason and
// Slurm's start estimate; else sbatch's refusal.
std::string job_detail(const JobRecord& j)
{
  if (!j.node_list.empty()) {
    return j.elapsed_s > 0 ? fmt::format("{} {}", j.node_list, format_human_duration(j.elapsed_s)) : j.node_list;
  }
  if (!j.error.empty()) {
    return j.error;
  }
  std::string d = j.reason.empty() ? "" : "(" + j.reason + ")";
  if (!j.start_estimate.empty()) {
    d += (d.empty() ? "" : " ") + std::string("start ~") + j.start_estimate;
  }
  return d;
}

struct PsOptions {
  bool all = false;
};

Result<int> run_ps(const PsOptions& opts, Context& ctx)
{
  auto store = request_store();
  RV_TRY(requests, load_requests(store));
  std::vector<RequestRecord> shown;
  for (auto& r : requests) {
    if (opts.all || !request_finished(r)) {
      shown.push_back(std::move(r));
    }
  }
  if (!shown.empty()) {
    RV_TRY(runner, ctx.make_runner());
    SystemClock clock;
    RV_TRY(report, refresh_and_reap(*runner, clock, store, shown));
    for (const auto& n : report.notes) {
      spdlog::info("{}", n);
    }
  }
  if (ctx.global.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : shown) {
      auto j = to_json(r);
      j.erase("plan");
      arr.push_back(j);
    }
    print_json(arr);
    return 0;
  }
  if (shown.empty()) {
    out(opts.all ? "no requests\n" : "no active requests (rv ps -a lists finished ones)\n");
    return 0;
  }
  out(fmt::format("{:<10} {:<16} {:<10} {:<21} {}\n", "REQUEST", "NAME", "STATE", "CREATED", "COMMAND"));
  for (const auto& r : shown) {
    auto cmd = r.command.size() > 50 ? r.command.substr(0, 47) + "..." : r.command;
    out(fmt::format("{:<10} {:<16} {:<10} {:<21} {}{}\n", r.id, r.name, r.state, r.created_at, cmd, git_label(r)));
    for (const auto& j : r.jobs) {
      out(fmt::format("  {} {:<6} {:<9} {:<13} {:<34} {}\n", j.strategy_id == r.winner ? "*" : " ", j.strategy_id,
                      j.job_id.empty() ? "-" : j.job_id, j.state.empty() ? "?" : j.state, job_detail(j), j.label));
    }
  }
  return 0;
}

struct StopOptions {
  std::string key;
  bool all = false;
  bool yes = false;
};

Result<int> run_stop(const StopOptions& opts, Context& ctx)
{
  auto store = request_store();
  std::vector<RequestRecord> targets;
  if (opts.all) {
    RV_TRY(requests, load_requests(store));
    for (auto& r : requests) {
      if (!request_finished(r)) {
        targets.push_back(std::move(r));
      }
    }
    if (!opts.yes && !targets.empty()) {
      if (!::isatty(0)) {
        return fail(ErrorCode::usage,
                    fmt::format("rv stop --all cancels every job of {} active request(s)", targets.size()),
                    "add --yes to confirm");
      }
      std::fputs(fmt::format("cancel every job of {} active request(s)? [y/N] ", targets.size()).c_str(), stderr);
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") {
        std::fputs("nothing cancelled\n", stderr);
        return 1;
      }
    }
  } else {
    if (opts.key.empty()) {
      return fail(ErrorCode::usage, "rv stop needs a request id, job id or name", "rv stop 3f9c02ab, or --all --yes");
    }
    RV_TRY(r, find_request(store, opts.key));
    targets.push_back(std::move(r));
  }
  std::vector<std::string> ids;
  for (const auto& r : targets) {
    for (const auto& j : r.jobs) {
      if (!j.job_id.empty()) {
        ids.push_back(j.job_id);
      }
    }
  }
  std::vector<RequestRecord*> with_secrets;
  for (auto& r : targets) {
    if (!r.secrets_file.empty()) {
      with_secrets.push_back(&r);
    }
  }
  if (!ids.empty() || !with_secrets.empty()) {
    RV_TRY(runner, ctx.make_runner());
    if (!ids.empty()) {
      if (auto c = slurm::cancel_jobs(*runner, ids); !c) {
        return std::unexpected(c.error());
      }
    }
    remove_secrets(*runner, store, with_secrets, true);
  }
  for (auto& r : targets) {
    (void)store.update(r.id, [](nlohmann::json& rec) { rec["state"] = "cancelled"; });
    out(fmt::format("stopped request {} ({} jobs)\n", r.id, r.job_ids().size()));
  }
  return 0;
}

struct LogsOptions {
  std::string key;
  bool follow = false;
  bool err = false;
  int node = -1;
  int tail = -1;
};

Result<int> run_logs(const LogsOptions& opts, Context& ctx)
{
  auto store = request_store();
  RequestRecord r;
  if (opts.key.empty()) {
    RV_TRY(requests, load_requests(store));
    if (requests.empty()) {
      return fail(ErrorCode::usage, "no requests yet", "rv run ... first");
    }
    r = requests.back();
  } else {
    RV_TRY(found, find_request(store, opts.key));
    r = std::move(found);
  }
  RV_TRY(runner, ctx.make_runner());
  const JobRecord* job = nullptr;
  auto pick = [&] {
    job = r.winner_job();
    for (const auto& j : r.jobs) {
      if (!opts.key.empty() && j.job_id == opts.key) {
        job = &j;
      }
    }
  };
  pick();
  // `rv run` returns before the race is decided: refresh (and reap) until a sibling has started,
  // waiting for it with -f.
  SystemClock clock;
  auto interval = std::chrono::milliseconds(1000);
  while (!job) {
    std::vector<RequestRecord> one = {r};
    RV_TRY(report, refresh_and_reap(*runner, clock, store, one));
    for (const auto& n : report.notes) {
      spdlog::info("{}", n);
    }
    r = std::move(one.front());
    pick();
    if (job) {
      break;
    }
    if (!opts.follow || request_finished(r)) {
      return fail(ErrorCode::usage,
                  fmt::format("no job of request {} has started{}", r.id, request_finished(r) ? " (it has ended)" : " yet"),
                  request_finished(r) ? "rv ps -a shows what happened to its jobs" : "rv logs -f waits for it");
    }
    if (interrupt_signal() != 0) {
      return fail(ErrorCode::interrupted, fmt::format("stopped waiting for request {} to start", r.id));
    }
    clock.sleep_for(interval);
    interval = std::min(std::chrono::milliseconds(5000), interval * 2);
  }
  auto path = log_path(r, *job, opts.err);
  if (opts.node >= 0) {
    path = fmt::format("{}/{}-{}.node{}.{}", r.log_dir, r.name, job->job_id, opts.node, opts.err ? "err" : "out");
  }
  if (opts.follow && opts.node < 0) {
    StdOutput terminal;
    RV_TRY(status, follow_job(*runner, clock, terminal, r, *job, 0, 0, [&](const std::string& prev, const std::string& next) {
      record_next_segment(store, r, prev, next);
    }));
    return exit_code_of(status, status.job_id);
  }
  proc::Command c;
  c.argv = opts.tail >= 0 ? std::vector<std::string>{"tail", "-n", std::to_string(opts.tail), path}
                          : std::vector<std::string>{"cat", path};
  c.on_stdout = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); };
  RV_TRY(o, runner->run(c));
  if (!o.ok()) {
    return fail(ErrorCode::io, fmt::format("cannot read {} on {}: {}", path, runner->where(), o.err),
                "the log appears once the job starts");
  }
  return 0;
}

} // namespace

void setup_ps(CLI::App& app, Context& ctx)
{
  auto ps_opts = std::make_shared<PsOptions>();
  auto* ps = app.add_subcommand("ps", "requests and their strategies; reaps losers a killed rv left behind");
  ps->alias("ls");
  ps->add_flag("-a,--all", ps_opts->all, "include finished requests");
  ps->callback([&ctx, ps_opts] { ctx.action = [&ctx, ps_opts] { return run_ps(*ps_opts, ctx); }; });

  auto stop_opts = std::make_shared<StopOptions>();
  auto* stop = app.add_subcommand("stop", "cancel a request's jobs, siblings included");
  stop->alias("cancel");
  stop->add_option("request", stop_opts->key, "request id (or prefix), job id, or job name");
  stop->add_flag("--all", stop_opts->all, "every active request");
  stop->add_flag("-y,--yes", stop_opts->yes, "confirm --all");
  stop->callback([&ctx, stop_opts] { ctx.action = [&ctx, stop_opts] { return run_stop(*stop_opts, ctx); }; });

  auto logs_opts = std::make_shared<LogsOptions>();
  auto* logs = app.add_subcommand("logs", "the winner's log (default: the latest request)");
  logs->add_option("request", logs_opts->key, "request id (or prefix), job id, or job name");
  logs->add_flag("-f,--follow", logs_opts->follow, "follow until the job ends; exit with its status");
  logs->add_flag("--err", logs_opts->err, "the stderr log");
  logs->add_option("--node", logs_opts->node, "the per-node log of node K (multi-node jobs)");
  logs->add_option("--tail", logs_opts->tail, "only the last N lines");
  logs->callback([&ctx, logs_opts] { ctx.action = [&ctx, logs_opts] { return run_logs(*logs_opts, ctx); }; });
}

} // namespace rv::cli
