// `rv sync push|pull|watch`: move files between this machine and the cluster, with the same
// selection, plan and transport as `rv run` (docs/sync.md).

#include "app/manage/project_sync.hpp"
#include "cli/commands.hpp"
#include "core/duration.hpp"
#include "core/printable.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

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
  return {
      {"root", p.root.string()},
      {"remote", p.remote_dir},
      {"transport", sync::to_string(p.report.transport)},
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
  RV_TRY(real, ctx.make_env());
  RV_TRY(root, push_root(real->env, o.path));
  const auto& settings = real->env.settings.sync;
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
                    plan.unchanged, sync::to_string(p.report.transport), p.remote_dir));
    return 0;
  }
  out(fmt::format("pushed {} files ({}), deleted {}{}, {} unchanged, via {} in {:.2f} s to {}\n", plan.send.size(),
                  sync::human_bytes(plan.send_bytes), plan.remove.size() + plan.remove_trees.size(), kept_text(p),
                  plan.unchanged, sync::to_string(p.report.transport), p.report.seconds, p.remote_dir));
  return 0;
}

struct PullOpts {
  std::string remote;
  std::string local; // "" = app::pull_destination
};

Result<int> run_pull(const PullOpts& o, Context& ctx)
{
  std::string key = o.remote; // a request goes to its own cluster; a remote path stays as it is
  RV_TRY(real, ctx.make_env_for_request(key));
  const auto& settings = real->env.settings.sync;
  RV_TRY(pulled, pull(real->env, key, o.local, settings));
  const auto& report = pulled.report;
  if (!report.skipped_links.empty()) {
    // Never made here: a link to outside the destination is how a pull would write elsewhere.
    spdlog::warn("{} symlink(s) pointing outside {} not made here (first: {}); rv sync pull makes only links "
                 "that stay inside",
                 report.skipped_links.size(), report.local_path, printable(report.skipped_links.front()));
  }
  if (ctx.global.json) {
    print_json({{"remote", pulled.source},
                {"local", report.local_path},
                {"files", report.files},
                {"bytes", report.bytes},
                {"skipped_links", report.skipped_links},
                {"transport", sync::to_string(report.transport)},
                {"seconds", report.seconds}});
    return 0;
  }
  out(fmt::format("pulled {} files ({}) from {} to {} via {} in {:.2f} s\n", report.files,
                  sync::human_bytes(report.bytes), pulled.source, report.local_path, sync::to_string(report.transport),
                  report.seconds));
  return 0;
}

struct WatchOpts {
  std::string path;
  std::string remote;
  std::string interval = "1s";
  bool allow_delete = false;
};

Result<int> run_watch(const WatchOpts& o, Context& ctx)
{
  auto secs = parse_duration(o.interval);
  if (!secs) {
    return fail(ErrorCode::usage, fmt::format("--interval '{}' is not a duration", o.interval), "e.g. 1s, 5s");
  }
  RV_TRY(real, ctx.make_env());
  RV_TRY(root, push_root(real->env, o.path));
  const auto& settings = real->env.settings.sync;
  RV_TRY_VOID(
      watch_project(real->env, root, o.remote, settings, std::chrono::milliseconds(*secs * 1000), o.allow_delete));
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
  pull->add_option("remote", pull_opts->remote, "request id (its winner's --output files), or a remote path")
      ->required();
  pull->add_option("local", pull_opts->local,
                   "local destination (default: a request's outputs go to <project>/rv-outputs, which is never "
                   "pushed and git ignores; a remote path to the current directory)");
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
