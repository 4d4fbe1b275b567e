#include "slurm/containers.hpp"

#include "core/text.hpp"
#include "slurm/jobs.hpp"

#include <chrono>

namespace rv::slurm {
namespace {

// POSIX sh: srun's SPANK options (--container-image: Pyxis; --container-env: a Pyxis whose host
// variables can win over the image's ENV), the plugstack file and the files it includes, then the first of
// apptainer and singularity on PATH with its version, and enroot. `timeout` bounds a program that
// hangs (a broken installation must not hold discovery).
constexpr std::string_view k_container_probe = R"sh(
h=$(timeout 10 srun --help 2>/dev/null)
case $h in *--container-image*) echo pyxis_srun=1 ;; esac
case $h in *--container-env*) echo pyxis_env=1 ;; esac
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
ps=$(sed -n 's/^[[:space:]]*[Pp][Ll][Uu][Gg][Ss][Tt][Aa][Cc][Kk][Cc][Oo][Nn][Ff][Ii][Gg][[:space:]]*=[[:space:]]*//p' "$conf" 2>/dev/null | tail -n 1)
[ -n "$ps" ] || ps=${conf%/*}/plugstack.conf
for f in "$ps" $(sed -n 's/^[[:space:]]*include[[:space:]][[:space:]]*//p' "$ps" 2>/dev/null); do
  if [ -r "$f" ] && grep -Eq '^[[:space:]]*(required|optional)[[:space:]].*pyxis' "$f" 2>/dev/null; then
    printf 'pyxis_plugstack=%s\n' "$f"
    break
  fi
done
for c in apptainer singularity; do
  p=$(command -v "$c" 2>/dev/null) || continue
  printf 'runtime=%s\npath=%s\n' "$c" "$p"
  printf 'version=%s\n' "$(timeout 10 "$c" --version 2>/dev/null | head -n 1)"
  break
done
if p=$(command -v enroot 2>/dev/null); then printf 'enroot=%s\n' "$p"; fi
true
)sh";

} // namespace

proc::Command container_probe_command()
{
  auto c = concurrent_read({"sh", "-c", std::string(k_container_probe), "rv-containers"});
  c.timeout = std::chrono::seconds(30);
  return c;
}

bool is_container_probe(const proc::Command& cmd)
{
  return cmd.argv.size() == 4 && cmd.argv[0] == "sh" && cmd.argv[3] == "rv-containers";
}

model::ContainerSupport parse_container_probe(const proc::Outcome& outcome)
{
  model::ContainerSupport s;
  if (!outcome.ok()) {
    return s;
  }
  s.probed = true;
  std::string plugstack;
  for (auto line : text::lines(outcome.out)) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    const auto key = line.substr(0, eq);
    const auto value = text::trim(line.substr(eq + 1));
    if (key == "pyxis_srun" && value == "1") {
      s.pyxis = true;
      s.pyxis_evidence = "srun --help";
    } else if (key == "pyxis_env" && value == "1") {
      s.pyxis_env = true;
    } else if (key == "pyxis_plugstack" && !value.empty()) {
      plugstack = std::string(value);
    } else if (key == "runtime" && (value == "apptainer" || value == "singularity") && s.apptainer.empty()) {
      s.apptainer = std::string(value);
    } else if (key == "path" && s.apptainer_path.empty()) {
      s.apptainer_path = std::string(value);
    } else if (key == "version" && s.apptainer_version.empty()) {
      // "apptainer version 1.3.4", "singularity-ce version 3.11.4": the last word.
      auto words = text::split_ws(value);
      if (!words.empty()) {
        s.apptainer_version = std::string(words.back());
      }
    } else if (key == "enroot" && !value.empty()) {
      s.enroot = true;
    }
  }
  if (!s.pyxis && !plugstack.empty()) {
    s.pyxis = true;
    s.pyxis_evidence = plugstack;
  }
  return s;
}

} // namespace rv::slurm
