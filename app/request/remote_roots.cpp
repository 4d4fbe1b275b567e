#include "app/request/remote_roots.hpp"

#include "core/printable.hpp"
#include "core/process/remote_files.hpp"
#include "core/text.hpp"

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
                  // The command's program: on the PATH the job inherits, or in the project's venv.
                  "[ -z \"$6\" ] || command -v -- \"$6\" >/dev/null 2>&1 || "
                  "{ [ -n \"$7\" ] && v=$(rv_abs \"$7\") && [ -x \"$v/bin/$6\" ]; } || "
                  "{ command -v -- \"${6}3\" >/dev/null 2>&1 && printf '%s\\n' \"${6}3\" >&2; exit " +
                  std::to_string(k_no_program) +
                  "; }; "
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
              prep.marker_id,
              prep.program,
              prep.venv};
  if (!prep.secrets.empty()) {
    cmd.stdin_data = prep.secrets;
  }
  cmd.timeout = std::chrono::seconds(30);
  return cmd;
}

Result<RemotePaths> read_prepared(const proc::Outcome& out, const std::string& root, const Preparation& prep,
                                  const std::string& where)
{
  if (out.exit_code == k_no_workdir && !prep.workdir.empty()) {
    return fail(ErrorCode::usage, fmt::format("--workdir {}: no such directory on {}", prep.workdir, where),
                "create it first (rv exec mkdir -p DIR), or leave --workdir out to sync the project");
  }
  if (out.exit_code == k_no_program && !prep.program.empty()) {
    const auto instead = text::first_line(out.err);
    return fail(ErrorCode::usage,
                fmt::format("{}: command not found on {}{}; nothing was submitted", printable(prep.program), where,
                            prep.venv.empty() ? "" : " (nor in the project's venv)"),
                !instead.empty() && instead == prep.program + "3"
                    ? fmt::format("did you mean {}? (rv run ... {} ...)", printable(instead), printable(instead))
                    : "check its name and PATH there (rv exec command -v NAME); a program the job makes or loads "
                      "itself needs a path (./tool, $HOME/bin/tool)");
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
