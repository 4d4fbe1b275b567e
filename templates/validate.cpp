// Input validation for render(): every error names the bad value and says what to do.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace rv::templates::detail {
namespace {

bool is_name_char(char c)
{
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

} // namespace

Result<bool> check_name(std::string_view what, std::string_view value, bool allow_empty)
{
  if (value.empty() && allow_empty) {
    return true;
  }
  if (value.empty() || value.size() > 128 || !std::all_of(value.begin(), value.end(), is_name_char) ||
      value.front() == '-' || value.front() == '.') {
    return fail(ErrorCode::usage, fmt::format("invalid {} '{}'", what, value),
                "use 1-128 letters, digits, '_', '-' or '.', not starting with '-' or '.'");
  }
  return true;
}

namespace {

Result<bool> check_path(std::string_view what, std::string_view path, bool required)
{
  if (path.empty()) {
    if (required) {
      return fail(ErrorCode::usage, fmt::format("no {} given", what),
                  "set it in the rv config (an absolute path on the cluster)");
    }
    return true;
  }
  if (path.front() != '/' || path.find('\0') != std::string_view::npos || path.find('\n') != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("{} '{}' is not an absolute path", what, path),
                "give an absolute path on the cluster, without newlines");
  }
  return true;
}

Result<bool> check_directive(std::string_view what, std::string_view value)
{
  if (value.find_first_of("\n\r") != std::string_view::npos || value.find('\0') != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("{} contains a line break", what), "#SBATCH values must fit on one line");
  }
  return true;
}

} // namespace

Result<bool> check_output_path(std::string_view path)
{
  bool dotdot =
      path == ".." || path.starts_with("../") || path.ends_with("/..") || path.find("/../") != std::string_view::npos;
  if (path.empty() || path.front() == '/' || dotdot || path.find('\0') != std::string_view::npos ||
      path.find('\n') != std::string_view::npos) {
    return fail(ErrorCode::usage, fmt::format("--output '{}' is not a path inside the job's directory", path),
                "give a relative path without '..', e.g. --output results");
  }
  return true;
}

Result<bool> check_inputs(const model::Strategy& s, const model::JobRequest& r, const RenderOptions& o, bool shell_step)
{
  if (!(shell_step && o.command.empty()) && o.command.find_first_not_of(" \t\n") == std::string::npos) {
    return fail(ErrorCode::usage, "the command is empty", "give the command to run, e.g. `rv run python train.py`");
  }
  if (o.command.find('\0') != std::string::npos) {
    return fail(ErrorCode::usage, "the command contains a NUL byte", "remove it; shells cannot pass NUL bytes");
  }
  if (s.nodes < 1 || s.gpus_per_node < 0 || s.cpus_per_task < 1 || s.walltime_s <= 0 || s.mem_mb_per_node < 0 ||
      s.time_min_s < 0) {
    return fail(ErrorCode::usage,
                fmt::format("strategy {} has invalid resources (nodes {}, gpus/node {}, cpus {}, time {} s)", s.id,
                            s.nodes, s.gpus_per_node, s.cpus_per_task, s.walltime_s),
                "this is a planner bug; please report it with --dry-run output");
  }
  std::vector<Result<bool>> checks{
      check_name("request id", o.request_id, true),
      check_name("project key", o.project_key, true),
      check_directive("partition", s.partition),
      check_directive("GRES", s.gres),
      check_directive("GPU type", s.gpu_type),
      check_directive("constraint", s.constraint),
      check_directive("account", r.account),
      check_directive("QOS", r.qos),
      check_directive("mail user", o.notify_mail_user),
      check_directive("dependency", o.dependency),
      check_path("log directory", o.log_dir, true),
      check_path("remote root", o.remote_root, !o.request_id.empty()),
      check_path("checkpoint root", o.checkpoint_root, true),
      check_path("output root", o.output_root, true),
      check_path("cache root", o.cache_root, true),
      check_path("working directory", o.workdir, false),
      check_path("venv", o.venv, false),
  };
  if (o.notify_webhook && o.secrets_file.empty()) {
    checks.push_back(fail(ErrorCode::usage, "webhook notifications need the secrets file (URL and key)",
                          "this is a bug in the caller: set secrets_file with the notify lines in it"));
  }
  for (const auto& node : r.exclude_nodes) {
    checks.push_back(check_directive("excluded node", node));
  }
  for (const auto& check : checks) {
    if (!check) {
      return std::unexpected(check.error());
    }
  }
  if (o.log_dir.find_first_of("\"\\%") != std::string::npos) {
    return fail(ErrorCode::usage, fmt::format("log directory '{}' contains '\"', '\\' or '%'", o.log_dir),
                "sbatch reads these itself in --output; choose another directory");
  }
  for (const auto& m : o.modules) {
    if (m.empty() || m.find_first_of(" \t\n") != std::string::npos) {
      return fail(ErrorCode::usage, fmt::format("invalid module name '{}'", m),
                  "give one module per entry, e.g. cuda/12.8.0");
    }
  }
  for (const auto& out : o.outputs) {
    RV_TRY(ok, check_output_path(out));
    (void)ok;
  }
  if (o.container) {
    // Both runtimes take mounts as SRC:DST,SRC:DST: a ',' or ':' in a path cannot be passed. Pyxis
    // hands each one to enroot as `echo "SRC DST FLAGS"` in a shell script (pyxis's add_mount and
    // its enroot start configuration): a space cuts the path, and '"', '$', '`' or '\' are the shell's.
    const bool pyxis = o.container->choice.runtime == model::ContainerRuntime::pyxis;
    constexpr std::string_view k_enroot_unsafe = " \"$`\\";
    constexpr std::string_view k_pyxis_hint = "use a path without them (a symbolic link to it), or set "
                                              "container_runtime apptainer where the cluster has it";
    for (const auto& p : container_own_mounts(o)) {
      if (p.find_first_of(",:") != std::string::npos) {
        return fail(ErrorCode::usage, fmt::format("the path '{}' cannot be mounted into a container (',' or ':')", p),
                    "choose a directory without ',' or ':' (remote_root, scratch_root, --workdir)");
      }
      if (pyxis && p.find_first_of(k_enroot_unsafe) != std::string::npos) {
        return fail(ErrorCode::usage,
                    fmt::format("the path '{}' cannot be mounted by Pyxis (enroot reads its mounts as shell words: "
                                "no space, '\"', '$', '`' or '\\')",
                                p),
                    std::string(k_pyxis_hint));
      }
    }
    for (const auto& m : o.container->order.mounts) {
      if (pyxis && (m.src + m.dst).find_first_of(k_enroot_unsafe) != std::string::npos) {
        return fail(ErrorCode::usage,
                    fmt::format("--container-mount {:?}: Pyxis cannot mount it (enroot reads its mounts as shell "
                                "words: no space, '\"', '$', '`' or '\\')",
                                m.src + ":" + m.dst + (m.read_only ? ":ro" : "")),
                    std::string(k_pyxis_hint));
      }
    }
    if (o.container->choice.runtime == model::ContainerRuntime::apptainer && !o.container->choice.program.empty() &&
        o.container->choice.program != "apptainer" && o.container->choice.program != "singularity") {
      return fail(ErrorCode::usage, fmt::format("unknown container program '{}'", o.container->choice.program),
                  "this is a bug in the caller: the program is apptainer or singularity");
    }
  }
  for (const auto& e : o.env) {
    if (!proc::is_variable_name(e.name) || e.value.find('\0') != std::string::npos) {
      return fail(ErrorCode::usage, fmt::format("invalid environment variable name '{}'", e.name),
                  "use letters, digits and '_', not starting with a digit");
    }
  }
  return true;
}

} // namespace rv::templates::detail
