#pragma once
// `rv sync` in the core: which directory a push sends, what a pull fetches (a path, or a request's
// outputs), and watching a project to push it again whenever it changes.

#include "app/env.hpp"
#include "app/run/launch/smart_exec.hpp"
#include "sync/transfer.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace rv::app {

// The directory to push: `path` when given (it must be a directory here), else the project
// holding the Env's current directory.
Result<std::filesystem::path> push_root(Env& env, const std::string& path);

// What `key` names on the cluster: a request (id, job id or name) means its winner's outputs
// (<remote root>/outputs/<name>-<job id>); anything else is a remote path (resolved there).
struct PullSource {
  std::string path;
  bool outputs = false; // a request's outputs
};
Result<PullSource> pull_from(Env& env, const std::string& key);
Result<std::string> pull_source(Env& env, const std::string& key); // pull_from's path

// Where a pull writes without a LOCAL: a request's outputs go to <project>/rv-outputs (made, with a
// .gitignore of `*`; outside a project, ./rv-outputs), a remote path to the current directory.
Result<std::filesystem::path> pull_destination(Env& env, const PullSource& from);

struct Pulled {
  std::string source; // the remote path fetched
  sync::PullReport report;
};

// Fetches what `key` names into `local` ("" = pull_destination).
Result<Pulled> pull(Env& env, const std::string& key, const std::filesystem::path& local, const SyncSettings& settings);

// A fingerprint of what a push would send: paths, sizes, mtimes, modes, link targets.
Result<std::string> project_fingerprint(Env& env, const std::filesystem::path& root, const SyncSettings& settings);

// Pushes `root` now, then, every `interval`, again once its files have changed and then stayed
// unchanged for one interval (debounce), until an interrupt. A failed push is logged and retried
// on the next change. `on_push` is told of every push (also the first).
Result<void> watch_project(Env& env, const std::filesystem::path& root, const std::string& remote_dir,
                           const SyncSettings& settings, std::chrono::milliseconds interval, bool allow_delete,
                           const std::function<void(const ProjectPush&)>& on_push = {});

} // namespace rv::app
