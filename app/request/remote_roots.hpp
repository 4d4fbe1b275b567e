#pragma once
// Where rv's files live on the cluster, as the login node resolves the configured paths
// (proc::remote's one rule), and the one script that creates them before any sbatch. Discovery
// resolves the roots in its round trip, so that submission (the directories, the secrets and every
// sbatch) is one round trip more (docs/discovery-cache.md).

#include "app/settings.hpp"
#include "core/process/runner.hpp"
#include "core/result.hpp"

#include <string>

namespace rv::app {

// rv's root directory and its cache directory on the login node, absolute.
struct RemoteRoots {
  std::string root, cache;
};

// Every directory rv writes below its root.
struct RemotePaths {
  std::string root, logs, checkpoints, outputs, cache, requests;
};
RemotePaths remote_paths(const RemoteRoots& roots);

// Resolves settings.remote_root and settings.scratch_root there (a concurrent command for a batch).
proc::Command roots_command(const Settings& settings);
// roots_command's outcome: both roots, or an error.
Result<RemoteRoots> read_roots(const Settings& settings, const proc::Outcome& outcome, const std::string& where);

// What prepare_command does besides creating the directories.
struct Preparation {
  std::string secrets;    // an env script written to <root>/requests/<secrets_id>/env, 0600, on stdin
  std::string secrets_id; // the request whose secrets they are ("" with no secrets)
  std::string workdir;    // must be a directory there ("" = no check); else exit k_no_workdir
  std::string marker_id;  // created last, as marker_path: the guard of sbatch commands in the same batch
  // The program the job's command starts (`python`), checked on the login node's PATH or in
  // `venv`'s bin ("" = no check); else exit k_no_program, printing `PROGRAM3` on stderr when that
  // exists (`python` missing, `python3` there: UX review 3, N7). Nothing is written then.
  std::string program;
  std::string venv; // the project's venv on the cluster ("" = none)
};
inline constexpr int k_no_workdir = 3; // the script's exit status when the workdir is not a directory
inline constexpr int k_no_program = 4; // ... when the command's program is not there

// The script that creates rv's directories under `root` (and `scratch`: the cache, "" = below the
// root), mode 0700, and does what `prep` says; it prints the resolved root and cache directories.
proc::Command prepare_command(const std::string& root, const std::string& scratch, const Preparation& prep);
// Its outcome: the directories, or a usage error (the workdir, the program) or an io error
// (anything else).
Result<RemotePaths> read_prepared(const proc::Outcome& outcome, const std::string& root, const Preparation& prep,
                                  const std::string& where);

// The file prepare_command creates last for request `id` under the resolved `root`.
std::string marker_path(const std::string& root, const std::string& id);
// `cmd` run only when `marker` exists; otherwise it prints why and exits k_not_prepared. Its
// argv and stdin reach `cmd` unchanged.
proc::Command guarded(const proc::Command& cmd, const std::string& marker);
inline constexpr int k_not_prepared = 97;

} // namespace rv::app
