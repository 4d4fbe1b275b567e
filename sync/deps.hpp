#pragma once
// Python dependencies: requirements.txt or pyproject.toml -> one venv per project and branch on
// the cluster, created with uv when the cluster has it, else `python3 -m venv` + pip, and
// reinstalled only when the dependency file's content hash changes (the hash lives in the venv).

#include "core/process/runner.hpp"
#include "core/result.hpp"
#include "sync/files.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::sync {

struct DepsFile {
  std::string rel_path; // relative to the project root ('/'-separated)
  std::string kind;     // "requirements" or "pyproject"
  std::string hash;     // sha256 of the content
};

// The dependency file for a command run from `rel_dir` (root-relative): the nearest
// requirements.txt, else pyproject.toml with a [project] table, from `rel_dir` up to the root.
Result<std::optional<DepsFile>> find_deps_file(const std::filesystem::path& root, const std::string& rel_dir);

// The bash script that makes the venv current: `bash -c SCRIPT rv-deps VENV HASH KIND FILE`.
// It takes a lock, skips the install when VENV/.rv-deps-hash holds HASH, else installs with uv
// (or python3 -m venv + pip) and writes the hash only after success. Its output is the tool's.
const std::string& deps_script();

// The argv that runs deps_script() for `file` (an absolute path on the cluster).
std::vector<std::string> deps_argv(const std::string& venv, const DepsFile& deps, const std::string& file);

// When the project's dependencies are installed (config `deps_install`): on the login node before
// submitting, inside the job (login nodes without internet), or never.
enum class DepsInstall { login, job, off };

// "login", "job" or "off".
std::string_view to_string(DepsInstall mode);
// The mode the config names, or nullopt.
std::optional<DepsInstall> parse_deps_install(std::string_view name);

// The job-script lines for `deps_install: job`: run deps_argv(), and on failure log
// "error: installing REL_PATH failed" and exit 1. Every value is shell-quoted: a project folder
// named `it"s` or `a" ; touch PWNED ; "` is text, never script.
std::string deps_job_setup(const std::string& venv, const DepsFile& deps, const std::string& file);

// A task's set-up (`setup` in a task file, --setup; docs/taskfile.md), kept beside the venv: its
// content key is the SHA-256 of the set-up line and of every file the project sends (path, type,
// size, mtime, mode, link target), so it runs again only when one of them changes.
std::string setup_key(const std::string& setup, const std::vector<LocalEntry>& entries);

// The job-script lines that run `setup` (`bash -c`, in the job's directory, in a subshell) unless
// DIR/KEY.done exists; under a lock on DIR/KEY.lock, so that concurrent jobs run it once; the mark
// is written only after success. A failure logs "error: the task's setup failed" and exits 1.
// In a --container job (templates/container.cpp exports RV_CT_IMAGE and `_rv_ct`) the set-up runs
// in the container, where the command runs; the lock and the mark stay on the node.
std::string setup_job_lines(const std::string& dir, const std::string& key, const std::string& setup);

struct DepsOutcome {
  bool installed = false; // false: the venv was already current
  double seconds = 0;
};

// Runs the install on the login node, streaming its output to `progress`; a failure carries
// the last lines of the tool's own output.
Result<DepsOutcome> ensure_venv(proc::Runner& remote, const std::string& venv, const DepsFile& deps,
                                const std::string& file, const std::function<void(std::string_view)>& progress);

} // namespace rv::sync
