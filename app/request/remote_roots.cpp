#include "app/request/remote_roots.hpp"

#include "core/process/remote_files.hpp"

#include <fmt/format.h>

#include <chrono>

namespace rv::app {

RemotePaths remote_paths(const RemoteRoots& roots)
{
  RemotePaths p;
  p.root = roots.root;
  p.cache = roots.cache;
  p.logs = p.root + "/logs";
  p.checkpoints = p.root + "/checkpoints";
  p.outputs = p.root + "/outputs";
  p.requests = p.root + "/requests";
  return p;
}

namespace {

std::vector<std::string> root_settings(const Settings& settings)
{
  std::vector<std::string> paths = {settings.remote_root};
  if (!settings.scratch_root.empty()) {
    paths.push_back(settings.scratch_root);
  }
  return paths;
}

} // namespace

proc::Command roots_command(const Settings& settings)
{
  auto cmd = proc::remote::resolve_command(root_settings(settings));
  cmd.concurrent = true;
  return cmd;
}

Result<RemoteRoots> read_roots(const Settings& settings, const proc::Outcome& outcome, const std::string& where)
{
  const auto paths = root_settings(settings);
  RV_TRY(resolved, proc::remote::read_resolved(outcome, paths, where));
  RemoteRoots r;
  r.root = resolved[0];
  r.cache = settings.scratch_root.empty() ? r.root + "/cache" : resolved[1];
  return r;
}

std::string marker_path(const std::string& root, const std::string& id)
{
  return root + "/requests/" + id + "/prepared";
}

proc::Command prepare_command(const std::string& root, const std::string& scratch, const Preparation& prep)
{
  proc::Command cmd;
  // Paths resolve on the login node by the one rule (core/process/remote_files.hpp); the
  // configured paths travel as positional arguments, the secrets on stdin. The marker goes first
  // (a stale one must not let an sbatch through) and is created last, after everything else held.
  cmd.argv = {"sh",
              "-c",
              std::string(proc::remote::abs_path_function()) +
                  "r=$(rv_abs \"$1\") || exit 1; "
                  "m=\"$r/requests/$5/prepared\"; [ -z \"$5\" ] || rm -f \"$m\" || exit 1; "
                  // The job's `cd`, checked from the same directory (the login's home).
                  "[ -z \"$4\" ] || [ -d \"$4\" ] || exit " +
                  std::to_string(k_no_workdir) +
                  "; "
                  "if [ -z \"$2\" ]; then c=\"$r/cache\"; else c=$(rv_abs \"$2\") || exit 1; fi; "
                  // Private from the start (N7): the caches hold models, tokens and wheels. A
                  // cache root rv cannot chmod (another's) is used as it is.
                  "( umask 077 && mkdir -p \"$r/logs\" \"$r/checkpoints\" \"$r/outputs\" \"$r/requests\" \"$c\" ) && "
                  "chmod 700 \"$r\" && { chmod 700 \"$c\" 2>/dev/null || :; } && "
                  "{ [ -z \"$3\" ] || ( umask 077 && d=\"$r/requests/$3\" && mkdir -p \"$d\" && "
                  "cat >\"$d/env.tmp\" && mv -f \"$d/env.tmp\" \"$d/env\" ); } && "
                  "{ [ -z \"$5\" ] || ( umask 077 && mkdir -p \"$r/requests/$5\" && : >\"$m\" ); } && "
                  "printf '%s\\n%s\\n' \"$r\" \"$c\"",
              "rv-prepare",
              root,
              scratch,
              prep.secrets.empty() ? std::string() : prep.secrets_id,
              prep.workdir,
              prep.marker_id};
  if (!prep.secrets.empty()) {
    cmd.stdin_data = prep.secrets;
  }
  cmd.timeout = std::chrono::seconds(30);
  return cmd;
}

Result<RemotePaths> read_prepared(const proc::Outcome& out, const std::string& root, const std::string& workdir,
                                  const std::string& where)
{
  if (out.exit_code == k_no_workdir && !workdir.empty()) {
    return fail(ErrorCode::usage, fmt::format("--workdir {}: no such directory on {}", workdir, where),
                "create it first (rv exec mkdir -p DIR), or leave --workdir out to sync the project");
  }
  auto nl = out.out.find('\n');
  if (!out.ok() || nl == std::string::npos) {
    return fail(ErrorCode::io, fmt::format("cannot create rv's directories under {} on {}: {}", root, where, out.err),
                "check the `remote_root` setting and that the cluster's home is writable");
  }
  RemoteRoots roots;
  roots.root = out.out.substr(0, nl);
  roots.cache = out.out.substr(nl + 1, out.out.find('\n', nl + 1) - nl - 1);
  return remote_paths(roots);
}

proc::Command guarded(const proc::Command& cmd, const std::string& marker)
{
  proc::Command g = cmd;
  g.argv = {"sh", "-c",
            "[ -e \"$1\" ] || { echo \"rv: not submitted: rv's directories were not prepared\" >&2; exit " +
                std::to_string(k_not_prepared) + "; }; shift; exec \"$@\"",
            "rv-guard", marker};
  g.argv.insert(g.argv.end(), cmd.argv.begin(), cmd.argv.end());
  return g;
}

} // namespace rv::app
