// `rv sync push|pull|watch`: move files between this machine and the cluster, with the same
// selection, plan and transport as `rv run` (docs/sync.md).

#include "cli/commands.hpp"
#include "app/requests.hpp"
#include "app/smart_exec.hpp"
#include "core/duration.hpp"
#include "core/interrupt.hpp"
#include "core/process/local_runner.hpp"
#include "sync/hash.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <thread>

namespace rv::cli {
using namespace rv::app;
namespace {

namespace fs = std::filesystem;

void out(const std::string& s)
{
  std::fputs(s.c_str(), stdout);
}

struct PushOpts {
  std::string path;
  std::string remote;
  bool dry_run = false;
  bool allow_delete = false;
};

// The directory to push: PATH when given, else the project holding the current directory.
Result<fs::path> push_root(const std::string& path)
{
  std::error_code ec;
  if (!path.empty()) {
    auto p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec || !fs::is_directory(p, ec)) {
      return fail(ErrorCode::usage, fmt::format("{} is not a directory here", path), "rv sync push [DIR] [REMOTE_DIR]");
    }
    return p;
  }
  auto cwd = fs::current_path(ec);
  if (ec) {
    return fail(ErrorCode::io, "cannot read the current directory: " + ec.message());
  }
  return project_root_for(cwd, "", local_home());
}

nlohmann::json push_json(const ProjectPush& p)
{
  const auto& plan = p.report.plan;
  nlohmann::json send = nlohmann::json::array();
  for (const auto& e : plan.send) {
    send.push_back({{"path", e.path}, {"bytes", e.size}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : p.selection.skipped) {
    skipped.push_back({{"path", s.path}, {"why", s.why}});
  }
  auto deleted = plan.remove;
  deleted.insert(deleted.end(), plan.remove_trees.begin(), plan.remove_trees.end());
  return {{"root", p.root.string()},
          {"remote", p.remote_dir},
          {"transport", p.report.transport},
          {"dry_run", p.report.dry_run},
          {"files", p.selection.entries.size()},
          {"send", send},
          {"send_bytes", plan.send_bytes},
          {"wire_bytes", p.report.wire_bytes},
          {"delete", deleted},
          {"mirror", p.report.mirrored},
          {"kept", p.report.kept},
          {"note", p.report.note},
          {"unchanged", plan.unchanged},
          {"skipped", skipped},
          {"seconds", p.report.seconds},
          {"git", {{"is_git", p.git.is_git}, {"branch", p.git.branch}, {"commit", p.git.commit}, {"dirty", p.git.dirty}}}};
}

// ", kept 3 not in the project" when the target is not rv's and holds paths the project lacks.
std::string kept_text(const ProjectPush& p)
{
  return p.report.kept.empty() ? std::string() : fmt::format(", kept {} not in the project", p.report.kept.size());
}

Result<int> run_push(const PushOpts& o, Context& ctx)
{
  RV_TRY(root, push_root(o.path));
  RV_TRY(settings, sync_settings(ctx.config, local_home()));
  RV_TRY(real, ctx.make_env());
  RV_TRY(p, push_project(real->env, root, o.remote, settings, o.dry_run, o.allow_delete));
  if (ctx.global.json) {
    print_json(push_json(p));
    return 0;
  }
  const auto& plan = p.report.plan;
  if (o.dry_run) {
    for (const auto& e : plan.send) {
      out(fmt::format("send    {} ({})\n", e.path, sync::human_bytes(e.size)));
    }
    for (const auto& d : plan.remove) {
      out(fmt::format("delete  {}\n", d));
    }
    for (const auto& d : plan.remove_trees) {
      out(fmt::format("delete  {}/\n", d));
    }
    for (const auto& d : p.report.kept) {
      out(fmt::format("keep    {}\n", d));
    }
    out(fmt::format("dry run: would send {} files ({}), delete {}{}, {} unchanged, via {} to {}\n", plan.send.size(),
                    sync::human_bytes(plan.send_bytes), plan.remove.size() + plan.remove_trees.size(), kept_text(p),
                    plan.unchanged, p.report.transport, p.remote_dir));
    return 0;
  }
  out(fmt::format("pushed {} files ({}), deleted {}{}, {} unchanged, via {} in {:.2f} s to {}\n", plan.send.size(),
                  sync::human_bytes(plan.send_bytes), plan.remove.size() + plan.remove_trees.size(), kept_text(p),
                  plan.unchanged, p.report.transport, p.report.seconds, p.remote_dir));
  return 0;
}

struct PullOpts {
  std::string remote;
  std::string local = ".";
};

// REMOTE as a path on the cluster: a request (id, job id or name) means its winner's outputs.
Result<std::string> pull_source(const std::string& key, proc::Runner& runner)
{
  if (key.empty()) {
    return fail(ErrorCode::usage, "rv sync pull needs what to fetch", "rv sync pull REQUEST|REMOTE_PATH [LOCAL]");
  }
  if (key.find('/') == std::string::npos && !key.starts_with("~")) {
    auto store = request_store();
    if (auto r = find_request(store, key)) {
      const auto* job = r->winner_job();
      if (!job || job->job_id.empty()) {
        return fail(ErrorCode::usage, fmt::format("request {} has no winner yet, so no outputs", r->id),
                    "rv ps -a shows its jobs");
      }
      return fmt::format("{}/outputs/{}-{}", r->remote_root, r->name, job->job_id);
    }
  }
  return resolve_remote_path(runner, key);
}

Result<int> run_pull(const PullOpts& o, Context& ctx)
{
  RV_TRY(settings, sync_settings(ctx.config, local_home()));
  RV_TRY(runner, ctx.make_runner());
  RV_TRY(source, pull_source(o.remote, *runner));
  proc::LocalRunner local;
  RV_TRY(report, sync::pull(*runner, local, source, o.local, settings.push));
  if (ctx.global.json) {
    print_json({{"remote", source}, {"local", report.local_path}, {"files", report.files}, {"bytes", report.bytes},
                {"transport", report.transport}, {"seconds", report.seconds}});
    return 0;
  }
  out(fmt::format("pulled {} files ({}) from {} to {} via {} in {:.2f} s\n", report.files, sync::human_bytes(report.bytes),
                  source, report.local_path, report.transport, report.seconds));
  return 0;
}

struct WatchOpts {
  std::string path;
  std::string remote;
  std::string interval = "1s";
  bool allow_delete = false;
};

// A fingerprint of what would be sent: paths, sizes, mtimes, modes, link targets.
Result<std::string> fingerprint(const fs::path& root, const SyncSettings& settings)
{
  proc::LocalRunner local;
  RV_TRY(sel, sync::list_project_files(root, local, settings.select));
  std::string all;
  for (const auto& e : sel.entries) {
    all += fmt::format("{}\t{}\t{}\t{}\t{}\n", e.path, e.size, e.mtime_s, e.mode, e.link_target);
  }
  return sync::sha256_hex(all);
}

// Sleeps `d` in small steps; false when interrupted.
bool nap(std::chrono::milliseconds d)
{
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (interrupt_signal() != 0) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return interrupt_signal() == 0;
}

Result<int> run_watch(const WatchOpts& o, Context& ctx)
{
  RV_TRY(root, push_root(o.path));
  RV_TRY(settings, sync_settings(ctx.config, local_home()));
  auto secs = parse_duration(o.interval);
  if (!secs) {
    return fail(ErrorCode::usage, fmt::format("--interval '{}' is not a duration", o.interval), "e.g. 1s, 5s");
  }
  const auto interval = std::chrono::milliseconds(*secs * 1000);
  RV_TRY(real, ctx.make_env());
  RV_TRY(first, push_project(real->env, root, o.remote, settings, false, o.allow_delete));
  RV_TRY(last, fingerprint(root, settings));
  spdlog::info("watching {} (every {}; Ctrl-C stops)", root.string(), o.interval);
  // Debounce: push once the files have stopped changing for one interval.
  std::string pending;
  while (nap(interval)) {
    RV_TRY(now, fingerprint(root, settings));
    if (now == last) {
      continue;
    }
    if (now != pending) {
      pending = now; // still changing: wait one more interval
      continue;
    }
    if (auto p = push_project(real->env, root, o.remote, settings, false, o.allow_delete); !p) {
      spdlog::warn("push failed: {} (retrying on the next change)", p.error().message);
      continue;
    }
    last = now;
    pending.clear();
  }
  spdlog::info("stopped watching");
  return 0;
}

} // namespace

void setup_sync(CLI::App& app, Context& ctx)
{
  auto* sync = app.add_subcommand("sync", "push a project to the cluster, pull files back, or push on every change");
  sync->require_subcommand(1);

  auto push_opts = std::make_shared<PushOpts>();
  auto* push = sync->add_subcommand("push", "mirror a project (git-aware, .rvignore, deletions) to its workspace");
  push->add_option("path", push_opts->path, "local directory (default: the project holding the current directory)");
  push->add_option("remote", push_opts->remote, "remote directory (default: the project's workspace for its branch)");
  push->add_flag("-n,--dry-run", push_opts->dry_run, "list what would be sent and deleted; change nothing");
  push->add_flag("--delete", push_opts->allow_delete,
                 "mirror deletions into a REMOTE_DIR that is not an rv workspace yet (and mark it as one)");
  push->callback([&ctx, push_opts] { ctx.action = [&ctx, push_opts] { return run_push(*push_opts, ctx); }; });

  auto pull_opts = std::make_shared<PullOpts>();
  auto* pull = sync->add_subcommand("pull", "fetch a remote file or directory, or a request's outputs");
  pull->add_option("remote", pull_opts->remote, "request id (its winner's --output files), or a remote path")->required();
  pull->add_option("local", pull_opts->local, "local destination (default: the current directory)");
  pull->callback([&ctx, pull_opts] { ctx.action = [&ctx, pull_opts] { return run_pull(*pull_opts, ctx); }; });

  auto watch_opts = std::make_shared<WatchOpts>();
  auto* watch = sync->add_subcommand("watch", "push now, then again whenever files change (debounced)");
  watch->add_option("path", watch_opts->path, "local directory (default: the project holding the current directory)");
  watch->add_option("remote", watch_opts->remote, "remote directory (default: the project's workspace)");
  watch->add_option("--interval", watch_opts->interval, "how often to look for changes (default 1s)");
  watch->add_flag("--delete", watch_opts->allow_delete,
                  "mirror deletions into a REMOTE_DIR that is not an rv workspace yet (and mark it as one)");
  watch->callback([&ctx, watch_opts] { ctx.action = [&ctx, watch_opts] { return run_watch(*watch_opts, ctx); }; });
}

} // namespace rv::cli
