#pragma once
// Smart execution for `rv run`, and the project push shared with `rv sync`: find the local files
// a command names, push the project to its workspace on the cluster, freeze a per-job snapshot,
// make the venv current, and say where the job runs (docs/sync.md).

#include "app/env.hpp"
#include "app/run/launch/run_extras.hpp"
#include "app/settings.hpp"
#include "sync/command.hpp"
#include "sync/files.hpp"
#include "sync/project.hpp"
#include "sync/transfer.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rv::app {

// Expands `~` of a remote path on the cluster and makes it absolute (relative = below $HOME).
Result<std::string> resolve_remote_path(proc::Runner& remote, const std::string& path);
// The absolute sync root on the cluster (sync_root, else remote_root/workspaces). With
// `resolved_root` (remote_root as discovery resolved it, "" = unknown) the default one costs no
// round trip: the login node's rule (`~`, relative = below $HOME) maps remote_root/workspaces to
// the resolved root's workspaces.
Result<std::string> resolve_sync_root(proc::Runner& remote, const Settings& settings,
                                      const std::string& resolved_root = {});
// `root`/workspaces, written as the settings' default sync root is (no doubled slash). Pure.
std::string workspaces_below(const std::string& root);

// `rv run`'s reads for its push, made ahead in the plan's discovery batch (issue #38 item 7): the
// sync root, the workspace and its snapshots directory resolved there (rv_abs), the push's listing
// of the workspace and the prune's listing, so that the push after the plan is its apply alone.
struct SyncAhead {
  std::filesystem::path root; // the project
  sync::GitInfo git;
  std::vector<std::string> configured; // sync root, workspace, snapshots, as configured
  std::vector<proc::Command> commands; // for the batch: the resolve, the push's listing, the prune's listing
  std::vector<proc::Outcome> answers;  // theirs, once the batch ran (else empty: the push lists itself)
};

// A pushed project: where it is here and there.
struct ProjectPush {
  std::filesystem::path root;
  sync::GitInfo git;
  sync::RemoteLayout layout;
  sync::FileSelection selection;
  sync::PushReport report;
  std::string remote_dir; // where the files went (the workspace unless REMOTE was given)
  // The prune's listing (snapshots, squeue) made ahead with the push's (SyncAhead); empty = none.
  std::vector<proc::Outcome> prune_listing;
};

// Selects the files of the project at `root` and pushes them to `remote_dir` (default: the
// project's workspace for its branch); logs what was skipped and what moved. Deletions happen
// only in rv's workspaces, or with `allow_delete` (--delete) in a directory the user names
// (sync/target.hpp).
// `resolved_root`: as for resolve_sync_root.
// `ahead`: reads made ahead for the project's workspace (SyncAhead): when they are of this push (the
// same project, sync root and workspace), its listing is not made again.
Result<ProjectPush> push_project(Env& env, const std::filesystem::path& root, const std::string& remote_dir,
                                 const SyncSettings& settings, bool dry_run, bool allow_delete,
                                 const std::string& resolved_root = {}, const SyncAhead* ahead = nullptr);

// The project root for a command run from `cwd` that names `entry_file` (may be ""): the
// project holding cwd; an error when cwd is the home or root directory, or outside the project.
Result<std::filesystem::path> project_root_for(const std::filesystem::path& cwd, const std::string& entry_file,
                                               const std::string& home);

// Before anything reaches the queue: a command whose launcher (python, torchrun, accelerate,
// deepspeed, bash, sh, ./x) names a script that does not exist here is refused, with a
// did-you-mean of the files beside where it should be. Paths rv cannot see (absolute, ~, $VAR,
// after a `cd`) and modules are not checked; --workdir and --no-sync skip the check.
Result<void> check_entry_exists(const std::vector<std::string>& command, const sync::CommandAnalysis& analysis,
                                const std::filesystem::path& cwd);

struct SmartRunFlags {
  std::string workdir;               // --workdir: run there, no sync
  bool no_sync = false;              // --no-sync
  std::vector<std::string> outputs;  // --output
  std::string setup;                 // --setup / a task file's `setup`: once per snapshot content
  std::vector<std::string> rv_flags; // rv run's own option names, for the misplaced-flag warning
  bool container = false;            // --container: the image brings its Python; no venv is made (docs/containers.md)
  // rv's root on the cluster as the plan's discovery resolved it ("" = not known): the sync root
  // below it then costs no round trip (issue #38 item 7).
  std::string resolved_root;
  // The push's reads made ahead (sync_ahead; null = none): used when they are of this push.
  std::shared_ptr<const SyncAhead> ahead;
  // The job's snapshot is left to the submission's batch (RunExtras::snapshot) when the prune's
  // listing came ahead and no login-node install needs it first; for a caller whose submission
  // makes it (submit_request).
  bool snapshot_in_submission = false;
};

// Warns about each of rv's own options (`rv_flags`) written after the command's first word: they
// go to the command. Called before anything else, so that `--dry-run` warns too.
void warn_misplaced_flags(const std::vector<std::string>& command, const std::vector<std::string>& rv_flags);

// Analyses `command` (`rv run`, `rv up --run`); when it names a local file (and neither --workdir nor --no-sync is
// given), pushes the project, snapshots it, makes its venv current and returns where the job
// runs and what the request records. Without a sync: `workdir` is --workdir, extras hold only
// the outputs.
struct SmartRun {
  std::string workdir;
  RunExtras extras;
};
Result<SmartRun> prepare_run(Env& env, const std::vector<std::string>& command, const SmartRunFlags& flags);

// What prepare_run will push for `command`, as reads to make ahead (SyncAhead, without answers);
// nullopt when it pushes nothing, or when it will refuse the command (prepare_run says why,
// after the plan, as without it). Local reads only (git, the file system): nothing is logged.
std::optional<SyncAhead> sync_ahead(Env& env, const std::vector<std::string>& command, const SmartRunFlags& flags);

// `rv up`'s interactive shell: when rv runs inside a project (not the home directory), pushes and
// snapshots it as prepare_run does, so the shell starts in the snapshot at the same relative
// directory; elsewhere, or with --workdir / --no-sync, nothing is sent.
Result<SmartRun> prepare_shell(Env& env, const SmartRunFlags& flags);

} // namespace rv::app
