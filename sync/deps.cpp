#include "sync/deps.hpp"

#include "core/enum_names.hpp"
#include "core/process/shell.hpp"
#include "sync/files.hpp"
#include "sync/hash.hpp"

#include <fmt/format.h>

namespace rv::sync {

namespace {
constexpr EnumNames<DepsInstall, 3>
    k_deps_names({{{DepsInstall::login, "login"}, {DepsInstall::job, "job"}, {DepsInstall::off, "off"}}});
} // namespace

std::string_view to_string(DepsInstall mode)
{
  return k_deps_names.name(mode);
}

std::optional<DepsInstall> parse_deps_install(std::string_view name)
{
  return k_deps_names.parse(name);
}
namespace {

std::string last_lines(std::string_view text, int n)
{
  while (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  auto pos = text.size();
  for (int i = 0; i < n && pos != std::string_view::npos && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
  }
  return std::string(pos == std::string_view::npos ? text : text.substr(pos + 1));
}

} // namespace

Result<std::optional<DepsFile>> find_deps_file(const std::filesystem::path& root, const std::string& rel_dir)
{
  std::filesystem::path rel = rel_dir == "." ? std::filesystem::path() : std::filesystem::path(rel_dir);
  for (;;) {
    for (const char* name : {"requirements.txt", "pyproject.toml"}) {
      auto path = root / rel / name;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) {
        continue;
      }
      auto text = read_text_file(path);
      const bool pyproject = std::string_view(name) == "pyproject.toml";
      if (pyproject && text.find("[project]") == std::string::npos) {
        continue; // a tool-only pyproject (black, ruff...) installs nothing
      }
      auto rel_path = (rel / name).generic_string();
      return std::optional<DepsFile>(DepsFile{rel_path, pyproject ? "pyproject" : "requirements", sha256_hex(text)});
    }
    if (rel.empty()) {
      return std::optional<DepsFile>();
    }
    rel = rel.parent_path();
  }
}

const std::string& deps_script()
{
  static const std::string script = R"sh(venv=$1 hash=$2 kind=$3 file=$4
mkdir -p -- "$(dirname -- "$venv")" || exit 1
exec 9>"$venv.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -x "$venv/bin/python" ] && [ "$(cat -- "$venv/.rv-deps-hash" 2>/dev/null)" = "$hash" ]; then
  echo "rv-deps: $venv is current (deps hash ${hash%"${hash#????????????}"}); nothing to install"
  exit 0
fi
rm -f -- "$venv/.rv-deps-hash"
uv=$(command -v uv || { [ -x "$HOME/.local/bin/uv" ] && echo "$HOME/.local/bin/uv"; })
cd -- "$(dirname -- "$file")" || exit 1
if [ -n "$uv" ]; then
  echo "rv-deps: installing $file into $venv with uv"
  [ -x "$venv/bin/python" ] || "$uv" venv --seed "$venv" || exit
  "$uv" pip install --python "$venv/bin/python" -r "$file" || exit
else
  command -v python3 >/dev/null 2>&1 || { echo "rv-deps: no python3 (and no uv) on $(hostname)" >&2; exit 127; }
  echo "rv-deps: installing $file into $venv with python3 -m venv and pip"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" || exit
  req=$file
  if [ "$kind" = pyproject ]; then
    req="$venv/.rv-pyproject-requirements.txt"
    "$venv/bin/python" - "$file" >"$req" <<'PY' || exit
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f).get("project", {})
print("\n".join(project.get("dependencies", [])))
PY
  fi
  "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r "$req" || exit
fi
printf '%s\n' "$hash" >"$venv/.rv-deps-hash" || exit
echo "rv-deps: installed; $venv is current"
)sh";
  return script;
}

std::vector<std::string> deps_argv(const std::string& venv, const DepsFile& deps, const std::string& file)
{
  return {"bash", "-c", deps_script(), "rv-deps", venv, deps.hash, deps.kind, file};
}

std::string deps_job_setup(const std::string& venv, const DepsFile& deps, const std::string& file)
{
  return proc::shell_join(deps_argv(venv, deps, file)) + " || { _rv_log " +
         proc::shell_quote("error: installing " + deps.rel_path + " failed") + "; exit 1; }\n";
}

std::string setup_key(const std::string& setup, const std::vector<LocalEntry>& entries)
{
  std::string data = "rv-setup 1\n" + setup + "\n";
  for (const auto& e : entries) {
    // NUL-separated fields: no path can fake another entry's.
    for (const auto& field : {e.path, std::to_string(static_cast<int>(e.type)), std::to_string(e.size),
                              std::to_string(e.mtime_s), std::to_string(e.mode), e.link_target}) {
      data += field;
      data.push_back('\0');
    }
    data.push_back('\n');
  }
  return sha256_hex(data);
}

std::string setup_job_lines(const std::string& dir, const std::string& key, const std::string& setup)
{
  static const std::string script = R"sh(dir=$1 key=$2 setup=$3
mkdir -p -- "$dir" || exit 1
exec 9>"$dir/$key.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -e "$dir/$key.done" ]; then
  echo "rv-setup: done before for this content (${key%"${key#????????????}"}); skipped"
  exit 0
fi
echo "rv-setup: running the task's setup"
${RV_CT_IMAGE:+_rv_ct} bash -c "$setup" || exit
: >"$dir/$key.done"
)sh";
  return proc::shell_join({"bash", "-c", script, "rv-setup", dir, key, setup}) + " || { _rv_log " +
         proc::shell_quote("error: the task's setup failed") + "; exit 1; }\n";
}

Result<DepsOutcome> ensure_venv(proc::Runner& remote, const std::string& venv, const DepsFile& deps,
                                const std::string& file, const std::function<void(std::string_view)>& progress)
{
  proc::Command c;
  c.argv = deps_argv(venv, deps, file);
  c.timeout = std::chrono::minutes(30);
  if (progress) {
    c.on_stdout = progress;
    c.on_stderr = progress;
  }
  RV_TRY(o, remote.run(c));
  DepsOutcome out;
  out.seconds = std::chrono::duration<double>(o.elapsed).count();
  if (o.timed_out) {
    return fail(ErrorCode::timeout, fmt::format("installing {} took more than 30 minutes", deps.rel_path),
                "set deps_install to job to install inside the job instead");
  }
  if (!o.ok()) {
    auto tail = last_lines(o.err.empty() ? o.out : o.err, 5);
    return fail(ErrorCode::generic,
                fmt::format("installing {} into {} failed (exit {}): {}", deps.rel_path, venv, o.exit_code, tail),
                "the installer's output is above; fix the dependency file, or set deps_install to job (install "
                "in the job) or off");
  }
  out.installed = o.out.find("nothing to install") == std::string::npos;
  return out;
}

} // namespace rv::sync
