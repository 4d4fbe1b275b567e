#include "app/manage/project_sync.hpp"

#include "app/request/lookup.hpp"
#include "app/request/reap.hpp"
#include "app/request/requests.hpp"
#include "core/interrupt.hpp"
#include "core/store/record_store.hpp"
#include "sync/hash.hpp"
#include "sync/project.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace rv::app {

namespace fs = std::filesystem;

Result<fs::path> push_root(Env& env, const std::string& path)
{
  std::error_code ec;
  if (!path.empty()) {
    auto p = fs::weakly_canonical(path.starts_with('/') ? fs::path(path) : env.cwd / path, ec);
    if (ec || !fs::is_directory(p, ec)) {
      return fail(ErrorCode::usage, fmt::format("{} is not a directory here", path), "rv sync push [DIR] [REMOTE_DIR]");
    }
    return p;
  }
  if (env.cwd.empty()) {
    return fail(ErrorCode::io, "cannot read the current directory");
  }
  return project_root_for(env.cwd, "", env.home);
}

Result<PullSource> pull_from(Env& env, const std::string& key)
{
  if (key.empty()) {
    return fail(ErrorCode::usage, "rv sync pull needs what to fetch", "rv sync pull REQUEST|REMOTE_PATH [LOCAL]");
  }
  if (key.find('/') == std::string::npos && !key.starts_with("~")) {
    if (auto r = find_request(env.requests, key)) {
      if (!r->winner_job()) {
        // Asked before any rv ps saw it end: the job that ran is found by asking the cluster (N4).
        std::vector<RequestRecord> one = {*r};
        RV_TRY(report, refresh_and_reap(env.cluster, env.clock, env.requests, one));
        (void)report;
        *r = std::move(one.front());
      }
      const auto* job = r->winner_job();
      if (!job || job->job_id.empty()) {
        return fail(ErrorCode::usage, fmt::format("request {} has no winner yet, so no outputs", r->id),
                    "rv ps -a shows its jobs");
      }
      if (r->sync.is_object() && r->sync.contains("outputs") && r->sync["outputs"].empty()) {
        // "pulled 0 files" said nothing of why (#24 item 12).
        return fail(ErrorCode::usage,
                    fmt::format("request {} ran without -o/--output: it has no outputs to pull", r->id),
                    fmt::format("rv logs {} shows its log; rv run -o PATH ... copies PATH after the job", r->id));
      }
      return PullSource{fmt::format("{}/outputs/{}-{}", r->remote_root, r->name, job->job_id), true};
    }
  }
  RV_TRY(path, resolve_remote_path(env.cluster, key));
  return PullSource{std::move(path), false};
}

Result<std::string> pull_source(Env& env, const std::string& key)
{
  RV_TRY(from, pull_from(env, key));
  return from.path;
}

Result<fs::path> pull_destination(Env& env, const PullSource& from)
{
  if (!from.outputs) {
    return env.cwd;
  }
  // The project holding the current directory, else the directory itself (a pull from $HOME is
  // fine: only a push refuses to send it whole).
  const auto root = sync::find_project_root(env.cwd).value_or(env.cwd);
  const auto dir = root / sync::k_pulled_outputs_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot make {}: {}", dir.string(), ec.message()),
                "name where to put the outputs: rv sync pull REQUEST LOCAL_DIR");
  }
  if (!fs::exists(dir / ".gitignore", ec)) { // git ignores what was pulled: the tree stays clean
    RV_TRY_VOID(
        store::write_file_atomic(dir / ".gitignore", "# rv sync pull's outputs: never pushed, never committed\n*\n"));
  }
  return dir;
}

Result<Pulled> pull(Env& env, const std::string& key, const fs::path& local, const SyncSettings& settings)
{
  RV_TRY(from, pull_from(env, key));
  fs::path dest;
  if (local.empty()) {
    RV_TRY(d, pull_destination(env, from));
    dest = std::move(d);
  } else {
    dest = local.is_absolute() ? local : env.cwd / local;
  }
  RV_TRY(report, sync::pull(env.cluster, env.local, from.path, dest, settings.push));
  return Pulled{std::move(from.path), std::move(report)};
}

Result<std::string> project_fingerprint(Env& env, const fs::path& root, const SyncSettings& settings)
{
  RV_TRY(sel, sync::list_project_files(root, env.local, settings.select));
  std::string all;
  for (const auto& e : sel.entries) {
    all += fmt::format("{}\t{}\t{}\t{}\t{}\n", e.path, e.size, e.mtime_s, e.mode, e.link_target);
  }
  return sync::sha256_hex(all);
}

Result<void> watch_project(Env& env, const fs::path& root, const std::string& remote_dir, const SyncSettings& settings,
                           std::chrono::milliseconds interval, bool allow_delete,
                           const std::function<void(const ProjectPush&)>& on_push)
{
  RV_TRY(first, push_project(env, root, remote_dir, settings, false, allow_delete));
  if (on_push) {
    on_push(first);
  }
  RV_TRY(last, project_fingerprint(env, root, settings));
  spdlog::info("watching {} (every {} ms; Ctrl-C stops)", root.string(), interval.count());
  std::string pending;
  while (true) {
    env.clock.sleep_for(interval); // wakes early on an interrupt
    if (interrupt_signal() != 0) {
      break;
    }
    RV_TRY(now, project_fingerprint(env, root, settings));
    if (now == last) {
      continue;
    }
    if (now != pending) {
      pending = now; // still changing: wait one more interval
      continue;
    }
    auto p = push_project(env, root, remote_dir, settings, false, allow_delete);
    if (!p) {
      spdlog::warn("push failed: {} (retrying on the next change)", p.error().message);
      continue;
    }
    if (on_push) {
      on_push(*p);
    }
    last = now;
    pending.clear();
  }
  spdlog::info("stopped watching");
  return {};
}

} // namespace rv::app
