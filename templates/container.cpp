// Containers (docs/containers.md): the variables and the `_rv_ct` function every script of a
// `--container` job defines (the command runs as `_rv_ct bash -c "$RV_COMMAND"`, or in srun tasks
// with Pyxis's options), the pull of a docker:// image for Apptainer, and the preflight's check
// inside the container. The job's environment, secrets included, reaches the container by
// environment (Apptainer without --cleanenv, srun --export=ALL), never in argv.

#include "templates/container.hpp"

#include "core/container.hpp"
#include "core/process/shell.hpp"
#include "core/text.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace rv::templates {
namespace {

bool ct_apptainer(const ContainerRun& c)
{
  return c.choice.runtime == model::ContainerRuntime::apptainer;
}

std::string ct_program(const ContainerRun& c)
{
  return c.choice.program.empty() ? std::string("apptainer") : c.choice.program;
}

// Extra mounts as both runtimes write them: SRC:DST[:ro].
std::string ct_extra_mounts(const ContainerRun& c)
{
  std::string out;
  for (const auto& m : c.order.mounts) {
    out += "," + m.src + ":" + m.dst + (m.read_only ? ":ro" : "");
  }
  return out;
}

bool ct_has_gpus(const model::Strategy& s)
{
  return s.gpus_per_node > 0 || !s.gres.empty();
}

} // namespace

std::string pulled_image_name(std::string_view image)
{
  std::string ref(image.starts_with("docker://") ? image.substr(9) : image);
  std::uint32_t h = 2166136261u; // FNV-1a: the same name from every rv build
  for (char c : image) {
    h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  std::string safe;
  for (char c : ref) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    safe += ok ? c : '_';
  }
  if (safe.size() > 100) {
    safe.resize(100);
  }
  return fmt::format("{}-{:08x}.sif", safe, h);
}

std::string describe_step(const ContainerRun& run, bool gpus, bool multi_node)
{
  const auto mounts = ct_extra_mounts(run);
  if (ct_apptainer(run)) {
    const auto image = run.order.image.kind == model::ImageKind::docker
                           ? fmt::format("SCRATCH/containers/images/{}", pulled_image_name(run.order.image.text))
                           : run.order.image.text;
    return fmt::format("{}{} exec{} --bind WORKDIR,SCRATCH,RV_ROOT{} --pwd WORKDIR {} bash -c \"$RV_COMMAND\"",
                       multi_node ? "on every node: " : "", ct_program(run), gpus ? " --nv" : "", mounts, image);
  }
  std::string pairs;
  for (const auto* p : {"WORKDIR", "SCRATCH", "RV_ROOT"}) {
    pairs += fmt::format("{}{}:{}", pairs.empty() ? "" : ",", p, p);
  }
  return fmt::format("srun{} --container-image={} --container-name=rv-REQUEST-JOB --container-mounts={}{} "
                     "--container-workdir=WORKDIR{} bash -c {}",
                     multi_node ? " (every node)" : "", pyxis_image(run.order.image), pairs, mounts,
                     run.choice.pyxis_env ? " --container-env=NAMES" : "", multi_node ? "_rv_task" : "\"$RV_COMMAND\"");
}

} // namespace rv::templates

namespace rv::templates::detail {
namespace {

using proc::shell_quote;

constexpr std::string_view k_ct_vars = R"sh(
# ---- container (docs/containers.md): {{runtime}}; the environment passes in, never argv ----
RV_CT_IMAGE_REF={{image_ref}}
RV_CT_WORKDIR={{workdir}}
RV_CT_CACHE="$RV_CACHE_ROOT/containers"
{{cache_exports}}RV_CT_IMAGE={{image}}
{{mounts}}
export RV_CT_IMAGE_REF RV_CT_WORKDIR RV_CT_IMAGE
{{name}}# The variables rv sets, the options' and the secrets' names (never values): the job's value of each
# wins over the image's own ENV (docs/containers.md, "The image's ENV"); RV_* ones are added as set.
RV_CT_ENV_NAMES={{env_names}}
export RV_CT_ENV_NAMES
# shellcheck disable=SC2317
_rv_ct_env_names() {
  local n out=""
  for n in $RV_CT_ENV_NAMES $(compgen -e RV_); do
    case $n in RV_CT_*) continue ;; esac
    case " $out " in *" $n "*) continue ;; esac
    [ -z "${!n+x}" ] || out="$out${out:+ }$n"
  done
  printf '%s' "$out"
}
export -f _rv_ct_env_names
# The command's runtime: `_rv_ct PROGRAM ARGS...` runs PROGRAM in the container.
# shellcheck disable=SC2317  # also called by srun tasks and timeout through export -f
_rv_ct() {{open}}
{{runner}}
{{close}}
export -f _rv_ct
)sh";

// A subshell: the {{prefix}}NAME exports (environment, never argv: Apptainer sets NAME inside from
// them, over the image's ENV) stay out of the caller's shell.
constexpr std::string_view k_ct_apptainer_runner = R"sh(  local _rv_n
  for _rv_n in $(_rv_ct_env_names); do export "{{prefix}}$_rv_n=${!_rv_n}"; done
  exec {{program}} exec{{nv}} --bind "$RV_CT_BINDS" --pwd "$RV_CT_WORKDIR" "$RV_CT_IMAGE" "$@")sh";

// --overlap: the step never waits for CPUs or memory a step before it may still hold
// (docs/slurm-quirks.md), and it also runs inside rv up's own step.
// --container-name: the job's container on this node, made by the preflight's (or the import's) step:
// no step imports the image again.
constexpr std::string_view k_ct_pyxis_runner =
    R"sh(  srun --overlap --nodes=1 --ntasks=1 --cpus-per-task={{cpus}} --export=ALL --container-image="$RV_CT_IMAGE" \
    --container-name="$RV_CT_NAME" --container-mounts="$RV_CT_MOUNTS" --container-workdir="$RV_CT_WORKDIR"{{env}} "$@")sh";

// Pyxis: one container per node for the whole job, named for the request and the job: the first
// step on a node imports the image into it, every later step of the job (the command's, rv up's
// shells, every rank's) reuses it. Pyxis removes it at the job's end (container_scope=job).
constexpr std::string_view k_ct_pyxis_name = R"sh(RV_CT_NAME={{name}}"${SLURM_JOB_ID:-0}"
export RV_CT_NAME
)sh";

// Helpers of the container phase: the runtime's error in one line, whether it is the image's
// fault (every node would fail: no re-race), and the end of a job whose container phase failed.
constexpr std::string_view k_ct_helpers = R"sh(
# ---- container phase (docs/containers.md): image, then the preflight inside the container ----
RV_CT_TIMEOUT="${RV_CT_TIMEOUT:-1800}"
# shellcheck disable=SC2317
_rv_ct_error() {
  # The runtime's own words: Apptainer's FATAL line, or Pyxis's "failed to import docker image" with
  # enroot's [ERROR] detail; else the first error line, else the last line.
  local t l d
  t=$(printf '%s\n' "$1" | tr -d '\r')
  l=$(printf '%s\n' "$t" | grep -m 1 -E 'FATAL|failed to import|manifest unknown')
  d=$(printf '%s\n' "$t" | grep -m 1 -F '[ERROR]')
  if [ -z "$l" ]; then
    l=$d
  elif [ -n "$d" ] && [ "$l" != "$d" ]; then
    l="$l: [ERROR]${d#*\[ERROR\]}"
  fi
  [ -n "$l" ] || l=$(printf '%s\n' "$t" | grep -m 1 -E 'ERROR|[Ee]rror|[Ff]ailed')
  [ -n "$l" ] || l=$(printf '%s\n' "$t" | grep -v '^[[:space:]]*$' | tail -n 1)
  printf '%s' "${l:0:400}"
}
# shellcheck disable=SC2317
_rv_ct_scope() {
  case $1 in
  *"manifest unknown"* | *"not found"* | *"Not Found"* | *"No such file"* | *"no such file"* | *"does not exist"* | \
    *nauthorized* | *denied* | *"invalid reference"* | *"Invalid image format"* | *"failed to import"* | \
    *"ailed to pull"* | *"ailed to get"* | *"Could not resolve host"*) printf 'scope=request ' ;;
  esac
}
# The verdict of a check that ran on every node: $1 its output, $2 srun's status, $3 the number of
# nodes, $4 what a node without its line did not do, $5 the runtime. Each node's line goes to the
# job's log; prints the first FAIL line, or one naming the first node that printed no ok line (its
# task never ran: a launch failure, a container that did not start), or "" when every node passed.
# shellcheck disable=SC2317
_rv_ct_nodes_line() {
  local n="" line
  printf '%s\n' "$1" | grep -E '^rv( preflight|: warning): ' >&2
  line=$(printf '%s\n' "$1" | grep -m 1 '^rv preflight: FAIL ')
  if [ -z "$line" ] && [ "$(printf '%s\n' "$1" | grep -c '^rv preflight: ok ')" -lt "$3" ]; then
    for n in $(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null); do
      case $1 in *"rv preflight: ok node=$n "*) n="" ;; *) break ;; esac
    done
    line="rv preflight: FAIL node=${n:-${SLURMD_NODENAME:-$(hostname)}} $(_rv_ct_scope "$1")reason=$4 ($5, srun exit $2): $(_rv_ct_error "$1")"
    printf '%s\n' "$line" >&2
  fi
  printf '%s' "$line"
}
# shellcheck disable=SC2317
_rv_ct_failed() {
  _rv_pf_verdict "$1"
  _rv_log "container check failed: the command does not run; exit 96"
  exit 96
}
)sh";

constexpr std::string_view k_ct_pull = R"sh(
# The docker:// image, pulled once per image into the cache on scratch (one pull at a time per
# image: a sibling job that is pulling it holds the lock); not the job's run time for the watchdog.
# The lock names its job: a holder that has ended as Slurm says (a race's loser cancelled mid-pull, a
# killed job), or this job's own run before a requeue, left it behind, and the next job takes it
# over instead of waiting RV_CT_TIMEOUT; squeue failing otherwise (no controller) is a live holder.
{{job_alive}}_rv_ct_lock_stale() {
  local holder
  holder=$(cat -- "$1/job" 2>/dev/null) || return 1
  [ -n "$holder" ] || return 1
  ! _rv_job_alive "$holder" || return 1
  if [ "$holder" = "${SLURM_JOB_ID:-}" ]; then
    _rv_log "the image's pull lock is this job's own, from a run before it was requeued: taking it over"
  else
    _rv_log "the image's pull lock is job $holder's, which has ended: taking it over"
  fi
}
_rv_ct_pull() {
  local start out="" rc=1 held=0 waited=0 lock="$RV_CT_IMAGE.lock" part="$RV_CT_IMAGE.part.${SLURM_JOB_ID:-0}.$$"
  start=$(date +%s)
  if [ -s "$RV_CT_IMAGE" ]; then
    _rv_log "image ready in 0 s: $RV_CT_IMAGE_REF (cached)"
    return 0
  fi
  _rv_log "pulling $RV_CT_IMAGE_REF"
  mkdir -p -- "${RV_CT_IMAGE%/*}" "$APPTAINER_CACHEDIR" 2>/dev/null
  while true; do
    if mkdir -- "$lock" 2>/dev/null; then
      held=1
      printf '%s\n' "${SLURM_JOB_ID:-}" >"$lock/job" 2>/dev/null
      break
    fi
    if [ -s "$RV_CT_IMAGE" ] || [ "$waited" -ge "$RV_CT_TIMEOUT" ]; then break; fi
    if [ $((waited % 10)) = 0 ] && _rv_ct_lock_stale "$lock"; then
      rm -rf -- "$lock"
      continue
    fi
    sleep 2
    waited=$((waited + 2))
  done
  if [ ! -s "$RV_CT_IMAGE" ]; then
    # Only a pull that succeeded is the image: a failed or timed-out one may have written part of it.
    out=$(timeout -k 5 "$RV_CT_TIMEOUT" {{program}} pull "$part" "$RV_CT_IMAGE_REF" 2>&1)
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then out="it did not finish within $RV_CT_TIMEOUT s (RV_CT_TIMEOUT)"; fi
    if [ "$rc" -eq 0 ] && [ -s "$part" ] && [ ! -s "$RV_CT_IMAGE" ]; then mv -f -- "$part" "$RV_CT_IMAGE"; fi
    rm -f -- "$part"
  fi
  [ "$held" = 0 ] || rm -rf -- "$lock"
  if [ ! -s "$RV_CT_IMAGE" ]; then
    printf 'rv preflight: FAIL node=%s scope=request reason=%s pull %s failed: %s\n' "${SLURMD_NODENAME:-$(hostname)}" \
      {{program}} "$RV_CT_IMAGE_REF" "$(_rv_ct_error "$out")"
    return 1
  fi
  _rv_log "image ready in $(($(date +%s) - start)) s: $RV_CT_IMAGE_REF"
}
_rv_ct_line=$(_rv_ct_pull)
if [ -n "$_rv_ct_line" ]; then
  printf '%s\n' "$_rv_ct_line" >&2
  _rv_ct_failed "$_rv_ct_line"
fi
)sh";

// Runs inside the container (sh, not bash: any image): the work directory, then the GPUs Slurm
// granted as nvidia-smi -L lists them there. $1 = the work directory, $2 = 1 when the GPUs are
// checked (the job has GPUs and the node has nvidia-smi). One line, as the node check prints.
constexpr std::string_view k_ct_probe = R"sh(node=${SLURMD_NODENAME:-$(hostname 2>/dev/null)}
if ! cd "$1" 2>/dev/null; then
  printf 'rv preflight: FAIL node=%s scope=request reason=the work directory %s is not visible inside the container\n' "$node" "$1"
  exit 0
fi
g=${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}}
n=0
if [ -n "$g" ] && [ "$g" != NoDevFiles ]; then n=$(printf '%s\n' "$g" | tr ',' '\n' | grep -c .); fi
k=-
if [ "$n" -gt 0 ] && [ "$2" = 1 ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    printf 'rv preflight: FAIL node=%s reason=the container sees no GPU (no nvidia-smi inside)\n' "$node"
    exit 0
  fi
  out=$(nvidia-smi -L 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'rv preflight: FAIL node=%s reason=the container sees no GPU: nvidia-smi -L exited %s: %s\n' "$node" "$rc" \
      "$(printf '%s\n' "$out" | head -n 1)"
    exit 0
  fi
  k=$(printf '%s\n' "$out" | awk '/^GPU [0-9]+:/ { if (g) w++; g = 1; next } /^[[:space:]]+MIG / { m++; g = 0; next }
    END { if (g) w++; print w + m }')
  if [ "$k" -lt "$n" ]; then
    printf 'rv preflight: FAIL node=%s reason=the container sees %s of the %s GPU(s) Slurm granted\n' "$node" "$k" "$n"
    exit 0
  fi
fi
# $3: the names whose job value the image's ENV would replace (Pyxis without --container-env), each
# compared with the job's copy in RV_CT_HOST_<NAME> (a secret, not read yet: set inside = the image's).
w=""
for v in $3; do
  eval "i=\${$v-rv-unset} h=\${RV_CT_HOST_$v-rv-unset}"
  [ "$i" = "$h" ] || w="$w${w:+, }$v"
done
[ -z "$w" ] || printf "rv: warning: node %s: the image sets %s: its values win over the job's (this Pyxis has no --container-env)\n" "$node" "$w"
printf 'rv preflight: ok node=%s container=1 gpus=%s/%s\n' "$node" "$k" "$n"
)sh";

// Apptainer: each node checks its own container (the batch shell on one node, an srun task per
// node otherwise) and prints one line; a container that did not start gets its error here.
constexpr std::string_view k_ct_check_apptainer = R"sh(
# shellcheck disable=SC2016,SC2089  # a script for sh -c in the container
RV_CT_PROBE={{probe}}
RV_CT_GPUS={{gpus}}
# shellcheck disable=SC2090
export RV_CT_PROBE RV_CT_TIMEOUT RV_CT_GPUS
# shellcheck disable=SC2317
_rv_ct_check() {
  local node="${SLURMD_NODENAME:-$(hostname)}" out rc smi=0 line
  if [ "$RV_CT_GPUS" = 1 ] && command -v nvidia-smi >/dev/null 2>&1; then smi=1; fi
  # shellcheck disable=SC2016  # expanded by the inner bash
  out=$(timeout -k 5 "$RV_CT_TIMEOUT" bash -c '_rv_ct sh -c "$1" rv-ct "$2" "$3"' _ "$RV_CT_PROBE" "$RV_CT_WORKDIR" "$smi" 2>&1)
  rc=$?
  line=$(printf '%s\n' "$out" | grep -m 1 '^rv preflight: ')
  if [ -z "$line" ]; then
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      line="rv preflight: FAIL node=$node reason=the container did not start within $RV_CT_TIMEOUT s"
    else
      line="rv preflight: FAIL node=$node $(_rv_ct_scope "$out")reason={{program}} exec exited $rc: $(_rv_ct_error "$out")"
    fi
  fi
  printf '%s\n' "$line"
  case $line in 'rv preflight: FAIL'*) return 1 ;; esac
}
)sh";

constexpr std::string_view k_ct_check_single = R"sh(_rv_ct_line=$(_rv_ct_check)
printf '%s\n' "$_rv_ct_line" >&2
case $_rv_ct_line in 'rv preflight: FAIL'*) _rv_ct_failed "$_rv_ct_line" ;; esac
)sh";

constexpr std::string_view k_ct_check_multi = R"sh(export -f _rv_ct_check _rv_ct_error _rv_ct_scope
_rv_ct_out=$(srun --overlap --nodes={{nodes}} --ntasks={{nodes}} --ntasks-per-node=1 --cpus-per-task=1 --kill-on-bad-exit=0 \
  --export=ALL bash -c _rv_ct_check 2>&1)
_rv_ct_rc=$?
_rv_ct_line=$(_rv_ct_nodes_line "$_rv_ct_out" "$_rv_ct_rc" {{nodes}} "the container check did not answer" {{program}})
[ -z "$_rv_ct_line" ] || _rv_ct_failed "$_rv_ct_line"
)sh";

// Pyxis: one container step on every node, named (--container-name): enroot imports the image into
// the job's container on each node at its start, the command's step reuses it; a node that printed
// no line did not start its container (_rv_ct_nodes_line). With --no-preflight the step only makes
// the container ({{probe}} prints the ok line): the import is its own phase either way, before the
// watchdog starts, so --idle-timeout never counts it.
constexpr std::string_view k_ct_check_pyxis = R"sh(
# shellcheck disable=SC2016,SC2089  # a script for sh -c in the container
RV_CT_PROBE={{probe}}
RV_CT_GPUS={{gpus}}
_rv_ct_smi=0
if [ "$RV_CT_GPUS" = 1 ] && command -v nvidia-smi >/dev/null 2>&1; then _rv_ct_smi=1; fi
{{env_check}}_rv_log "pulling $RV_CT_IMAGE_REF (enroot, {{where}}, into the job's container $RV_CT_NAME)"
_rv_ct_start=$(date +%s)
_rv_ct_out=$(timeout -k 5 "$RV_CT_TIMEOUT" srun --overlap --nodes={{nodes}} --ntasks={{nodes}} --ntasks-per-node=1 --cpus-per-task=1 \
  --kill-on-bad-exit=0 --export=ALL --container-image="$RV_CT_IMAGE" --container-name="$RV_CT_NAME" \
  --container-mounts="$RV_CT_MOUNTS" --container-workdir="$RV_CT_WORKDIR"{{env}} \
  sh -c "$RV_CT_PROBE" rv-ct "$RV_CT_WORKDIR" "$_rv_ct_smi" "${RV_CT_ENV_CHECK:-}" 2>&1)
_rv_ct_rc=$?
for _rv_n in ${RV_CT_ENV_CHECK:-}; do unset "RV_CT_HOST_$_rv_n"; done # the check's copies: not the job's
_rv_ct_line=$(_rv_ct_nodes_line "$_rv_ct_out" "$_rv_ct_rc" {{nodes}} "the container did not start" pyxis)
[ -z "$_rv_ct_line" ] || _rv_ct_failed "$_rv_ct_line"
_rv_log "image ready in $(($(date +%s) - _rv_ct_start)) s: $RV_CT_IMAGE_REF"
)sh";

// Pyxis without --container-env: the check compares each name's value inside with the job's (the
// image's ENV wins there); the job's values go in as RV_CT_HOST_<NAME> (environment, not argv).
constexpr std::string_view k_ct_env_check =
    R"sh(RV_CT_ENV_CHECK="$RV_CT_ENV_NAMES $(compgen -e RV_ | grep -v '^RV_CT_')"
for _rv_n in $RV_CT_ENV_CHECK; do
  if [ -n "${!_rv_n+x}" ]; then export "RV_CT_HOST_$_rv_n=${!_rv_n}"; fi
done
)sh";

// The import step's program without the preflight: the container started, nothing checked.
constexpr std::string_view k_ct_import_only =
    R"sh(printf 'rv preflight: ok node=%s container=1 imported=1\n' "${SLURMD_NODENAME:-$(hostname 2>/dev/null)}")sh";

std::string ct_mounts_line(const Context& ctx, const ContainerRun& c)
{
  const bool apptainer = ct_apptainer(c);
  std::string list = ctx.options.workdir.empty()
                         ? (apptainer ? "\"$RV_CT_WORKDIR\"" : "\"$RV_CT_WORKDIR:$RV_CT_WORKDIR\"")
                         : std::string();
  for (const auto& p : container_own_mounts(ctx.options)) {
    const auto q = shell_quote(apptainer ? p : p + ":" + p);
    list += list.empty() ? q : "," + q;
  }
  if (const auto extra = ct_extra_mounts(c); !extra.empty()) {
    list += shell_quote(extra);
  }
  return fmt::format("{0}={1}\nexport {0}", apptainer ? "RV_CT_BINDS" : "RV_CT_MOUNTS", list);
}

// A shell variable's name (the only names rendered into the script or passed to Pyxis).
bool ct_is_name(std::string_view n)
{
  const auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !n.empty() && head(n[0]) &&
         std::all_of(n.begin(), n.end(), [&](char c) { return head(c) || (c >= '0' && c <= '9'); });
}

// Pyxis's container name before the job id: `rv-<request>-` (characters enroot keeps in a name).
std::string ct_name_prefix(const Context& ctx)
{
  std::string req;
  for (char c : ctx.options.request_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    req += ok ? c : '_';
  }
  return shell_quote("rv-" + (req.empty() ? std::string("job") : req) + "-");
}

// The variables whose job value must win over an image's ENV: rv's environment (preamble.cpp),
// what a multi-node task sets, --env's names and the secrets' names (RV_* ones are also taken as
// set, at the call: _rv_ct_env_names).
std::vector<std::string> ct_env_names(const Context& ctx)
{
  std::vector<std::string> names;
  const auto add = [&](const std::string& n) {
    if (ct_is_name(n) && !n.starts_with("RV_") && std::find(names.begin(), names.end(), n) == names.end()) {
      names.push_back(n);
    }
  };
  for (const auto& n : environment_names()) {
    add(n);
  }
  if (ctx.multi_node) {
    for (const auto& n : task_names()) {
      add(n);
    }
  }
  for (const auto& e : ctx.options.env) {
    add(e.name);
  }
  for (const auto& n : ctx.options.secret_names) {
    add(n);
  }
  return names;
}

// Pyxis's --container-env with those names, where srun offers it (discovery); "" otherwise.
std::string ct_pyxis_env_option(const ContainerRun& c)
{
  return c.choice.pyxis_env ? " --container-env=\"$(_rv_ct_env_names | tr ' ' ,)\"" : "";
}

} // namespace

std::vector<std::string> container_own_mounts(const RenderOptions& o)
{
  std::vector<std::string> paths;
  for (const auto& p : {o.workdir, o.cache_root, o.remote_root}) {
    if (!p.empty() && std::find(paths.begin(), paths.end(), p) == paths.end()) {
      paths.push_back(p);
    }
  }
  // A path inside another one is mounted with it: a snapshot under rv's root ("workspaces/my proj")
  // needs no mount of its own, nor the characters of its project's name in the runtime's list.
  const auto inside = [&](const std::string& p) {
    return std::any_of(paths.begin(), paths.end(), [&](const std::string& q) {
      return p.size() > q.size() && p.starts_with(q) && (q.ends_with('/') || p[q.size()] == '/');
    });
  };
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (!inside(p)) {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<std::string> exported_names(std::string_view script)
{
  std::vector<std::string> names;
  for (auto line : text::lines(script)) {
    line = text::trim(line);
    if (!line.starts_with("export ") || line.starts_with("export -")) {
      continue;
    }
    for (auto word : text::split_ws(line.substr(7))) {
      if (word.starts_with("#")) {
        break;
      }
      const auto name = word.substr(0, word.find('='));
      if (ct_is_name(name) && std::find(names.begin(), names.end(), name) == names.end()) {
        names.emplace_back(name);
      }
    }
  }
  return names;
}

std::string container_setup(const Context& ctx)
{
  if (!ctx.options.container) {
    return {};
  }
  const auto& c = *ctx.options.container;
  const bool apptainer = ct_apptainer(c);
  std::string image;
  if (apptainer && c.order.image.kind == model::ImageKind::docker) {
    image = "\"$RV_CT_CACHE/images/\"" + shell_quote(pulled_image_name(c.order.image.text));
  } else {
    image = shell_quote(apptainer ? c.order.image.text : pyxis_image(c.order.image));
  }
  const auto prefix = ct_program(c) == "singularity" ? "SINGULARITYENV_" : "APPTAINERENV_";
  const auto runner =
      apptainer
          ? fill(k_ct_apptainer_runner,
                 {{"program", ct_program(c)}, {"nv", ct_has_gpus(ctx.strategy) ? " --nv" : ""}, {"prefix", prefix}})
          : fill(k_ct_pyxis_runner,
                 {{"cpus", std::to_string(ctx.strategy.cpus_per_task)}, {"env", ct_pyxis_env_option(c)}});
  const auto exports = apptainer ? "export APPTAINER_CACHEDIR=\"$RV_CT_CACHE/apptainer\" "
                                   "SINGULARITY_CACHEDIR=\"$RV_CT_CACHE/apptainer\"\n"
                                 : "export ENROOT_CACHE_PATH=\"$RV_CT_CACHE/enroot\"\n";
  return fill(k_ct_vars, {{"runtime", apptainer ? ct_program(c) : std::string("pyxis")},
                          {"image_ref", shell_quote(c.order.image.text)},
                          {"workdir", ctx.options.workdir.empty() ? "\"$PWD\"" : shell_quote(ctx.options.workdir)},
                          {"cache_exports", exports},
                          {"image", image},
                          {"mounts", ct_mounts_line(ctx, c)},
                          {"name", apptainer ? std::string() : fill(k_ct_pyxis_name, {{"name", ct_name_prefix(ctx)}})},
                          {"env_names", shell_quote(text::join(ct_env_names(ctx), " "))},
                          {"open", apptainer ? "(" : "{"},
                          {"close", apptainer ? ")" : "}"},
                          {"runner", runner}});
}

std::string container_phase(const Context& ctx)
{
  if (!ctx.options.container || ctx.step) {
    return {};
  }
  const auto& c = *ctx.options.container;
  const bool apptainer = ct_apptainer(c);
  const bool gpus = ct_has_gpus(ctx.strategy);
  std::string out;
  if (!ctx.options.preflight || !gpus) {
    out += preflight_verdict_function(ctx); // preflight() did not define it
  }
  out += k_ct_helpers;
  if (apptainer && c.order.image.kind == model::ImageKind::docker) {
    out += fill(k_ct_pull, {{"program", ct_program(c)}, {"job_alive", std::string(job_alive_function())}});
  }
  if (!ctx.options.preflight && apptainer) {
    return out;
  }
  const bool check = ctx.options.preflight;
  const Vars vars{{"probe", shell_quote(check ? k_ct_probe : k_ct_import_only)},
                  {"gpus", gpus ? "1" : "0"},
                  {"program", ct_program(c)},
                  {"nodes", std::to_string(ctx.strategy.nodes)},
                  {"env", ct_pyxis_env_option(c)},
                  {"env_check", check && !c.choice.pyxis_env ? std::string(k_ct_env_check) : std::string()},
                  {"where", check ? "at the start of the preflight's container step"
                                  : "an import step of its own: the preflight is off"}};
  if (!apptainer) { // Pyxis imports at the start of a named step: with or without the checks
    return out + fill(k_ct_check_pyxis, vars);
  }
  out += fill(k_ct_check_apptainer, vars);
  return out + (ctx.multi_node ? fill(k_ct_check_multi, vars) : std::string(k_ct_check_single));
}

std::string container_prefix(const Context& ctx, bool in_task)
{
  if (!ctx.options.container || (ctx.options.container->prepare_only && !ctx.step)) {
    return {};
  }
  const bool pyxis_task = !ct_apptainer(*ctx.options.container) && in_task;
  return pyxis_task ? std::string() : std::string("_rv_ct ");
}

std::string container_srun_flags(const Context& ctx)
{
  if (!ctx.options.container || ct_apptainer(*ctx.options.container) || ctx.options.container->prepare_only) {
    return {};
  }
  return " --container-image=\"$RV_CT_IMAGE\" --container-name=\"$RV_CT_NAME\" --container-mounts=\"$RV_CT_MOUNTS\" "
         "--container-workdir=\"$RV_CT_WORKDIR\"" +
         ct_pyxis_env_option(*ctx.options.container) + " \\\n ";
}

} // namespace rv::templates::detail
