#pragma once
// The project a command belongs to: its root, its git state, its identity on the cluster, and
// where its workspace, snapshots and venv live there (docs/sync.md, "Remote layout").

#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace rv::sync {

// The nearest directory at or above `start` that is a git work tree's top; else the nearest
// holding pyproject.toml, requirements.txt, setup.py or setup.cfg; nullopt when neither exists.
std::optional<std::filesystem::path> find_project_root(const std::filesystem::path& start);

struct GitInfo {
  bool is_git = false;
  std::string branch; // "main"; detached HEAD: "detached-<commit>"
  std::string commit; // short hash; "" before the first commit
  bool dirty = false; // uncommitted changes (untracked files included)
};

// Reads branch, commit and dirty state of `root` with git (run by `local`).
GitInfo read_git_info(const std::filesystem::path& root, proc::Runner& local);

// A branch name as one safe path component: `/` -> `--`, other unsafe characters -> `-`,
// runs of `-` collapsed (but `--` from `/` kept), at most 80 characters; "" -> "_default".
std::string safe_branch(std::string_view branch);

// The project's identity on the cluster: `<basename>-<12 hex of sha256(absolute root)>`, so two
// projects with the same folder name never share a workspace.
std::string project_id(const std::filesystem::path& absolute_root);

// Where a project's files live on the cluster, all below `sync_root`.
struct RemoteLayout {
  std::string project_dir; // <sync_root>/<project id>
  std::string branch_dir;  // <project_dir>/<safe branch>
  std::string workspace;   // <branch_dir>/code: mirrors the local project
  std::string snapshots;   // <branch_dir>/snapshots
  std::string venv;        // <branch_dir>/venv
};

// Builds the layout (pure); `sync_root` must be absolute.
RemoteLayout remote_layout(const std::string& sync_root, const std::string& project, const std::string& branch);

// A snapshot's directory name: `<epoch seconds>-<request id>`; the time is its creation time,
// read back by `snapshot_created` for pruning (mtimes are inherited from the files, not trusted).
std::string snapshot_name(std::int64_t created_s, const std::string& request_id);
// The creation time and request id of a snapshot name, or nullopt when it is not one.
std::optional<std::pair<std::int64_t, std::string>> parse_snapshot_name(std::string_view name);

// Joins a remote directory and a '/'-separated relative path ("" or "." -> the directory).
std::string remote_join(const std::string& dir, const std::string& rel);

} // namespace rv::sync
