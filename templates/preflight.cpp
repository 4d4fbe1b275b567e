// The in-job GPU preflight (docs/preflight.md): after the race guard, before anything of the
// user's runs, every node checks that its GPUs are usable. A failing node ends the job with exit
// 96 and one line `rv preflight: FAIL node=... reason=...` on stderr, and the same line in the
// request's verdict file `preflight.<job id>` (preflight_verdict_path), which only the preflight
// writes: exit 96 alone is no verdict, since the user's command may exit 96 too (N2).

#include "templates/preflight.hpp"

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

namespace rv::templates::detail {
namespace {

// One node's check. Prints one line on stdout, `rv preflight: ok|skip|FAIL node=N key=value...`,
// and returns 0 (ok or skipped) or 1 (failed). Runs in the batch shell (single node) or in an
// srun task per node (multi-node), where SLURM_STEP_GPUS names the step's GPUs.
constexpr std::string_view k_node_check = R"sh(
# ---- GPU preflight (docs/preflight.md): checks this node's GPUs before the command runs ----
RV_PREFLIGHT_REQUIRED={{required}}
RV_PREFLIGHT_SITE_CHECK={{site_check}}
# shellcheck disable=SC2317  # also called by srun through export -f
_rv_pf_node() {
  local node="${SLURMD_NODENAME:-$(hostname)}" t="${RV_PREFLIGHT_TIMEOUT:-10}" start end granted="" n=0
  local out rc visible driver="" line idx ecc reason="" id
  start=$(date +%s%N)
  _rv_pf_fail() { printf 'rv preflight: FAIL node=%s reason=%s\n' "$node" "$*"; }
  # nvidia-smi ARGS within the timeout, its output in `out` and status in `rc`; a hang or a known
  # fault text prints the FAIL line and returns 1.
  _rv_pf_smi() {
    out=$(timeout -k 2 "$t" nvidia-smi "$@" 2>&1)
    rc=$?
    case $rc in 124 | 137)
      _rv_pf_fail "nvidia-smi ${1%%=*} did not answer within ${t} s (hung driver or GPU)"
      return 1 ;;
    esac
    reason=$(_rv_pf_fault_text "$out")
    if [ -n "$reason" ]; then _rv_pf_fail "$reason"; return 1; fi
  }
  granted="${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}}"
  if [ -n "$granted" ] && [ "$granted" != NoDevFiles ]; then
    n=$(printf '%s\n' "$granted" | tr ',' '\n' | grep -c .)
  fi
  if [ "$n" -eq 0 ]; then
    printf 'rv preflight: skip node=%s reason=no GPUs granted to this job\n' "$node"
    return 0
  fi
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    if [ "$RV_PREFLIGHT_REQUIRED" = 1 ]; then
      _rv_pf_fail "nvidia-smi is not on PATH (the site profile requires the preflight)"
      return 1
    fi
    printf 'rv preflight: skip node=%s reason=nvidia-smi is not on PATH; GPU checks skipped\n' "$node"
    return 0
  fi
  _rv_pf_smi -L || return 1
  if [ "$rc" -ne 0 ]; then
    _rv_pf_fail "nvidia-smi -L exited $rc: $(printf '%s' "$out" | head -n 1)"
    return 1
  fi
  # MIG instances are the devices a job sees where a GPU is split; whole GPUs count otherwise.
  visible=$(printf '%s\n' "$out" | awk '
    /^GPU [0-9]+:/ { if (g) whole++; g = 1; next }
    /^[[:space:]]+MIG / { mig++; g = 0; next }
    END { if (g) whole++; print whole + mig }')
  if [ "$visible" -lt "$n" ]; then
    _rv_pf_fail "Slurm granted $n GPU(s) ($granted) but nvidia-smi lists $visible"
    return 1
  fi
  for id in $(printf '%s' "${CUDA_VISIBLE_DEVICES:-}" | tr ',' ' '); do
    case $id in GPU-* | MIG-*)
      case $out in *"$id"*) ;; *) _rv_pf_fail "CUDA_VISIBLE_DEVICES names $id, which nvidia-smi does not list"; return 1 ;; esac ;;
    esac
  done
  _rv_pf_smi --query-gpu=index,driver_version,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits ||
    return 1
  if [ "$rc" -eq 0 ]; then
    while IFS=', ' read -r idx line ecc; do
      [ -n "$driver" ] || driver=$line
      case $ecc in '' | *[!0-9]*) ;; *)
        if [ "$ecc" -gt 0 ]; then _rv_pf_fail "GPU $idx reports $ecc uncorrectable ECC error(s)"; return 1; fi ;;
      esac
    done <<<"$out"
  fi
  if [ -n "$RV_PREFLIGHT_SITE_CHECK" ]; then
    out=$(timeout -k 2 60 bash -c "$RV_PREFLIGHT_SITE_CHECK" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ]; then
      _rv_pf_fail "the site check exited $rc: $(printf '%s' "$out" | head -n 1)"
      return 1
    fi
  fi
  if [ "${SLURM_NODEID:-0}" != 0 ] && [ -n "${RV_PF_MASTER:-}" ] && [ "${RV_PF_LISTENING:-0}" = 1 ]; then
    # shellcheck disable=SC2016  # the arguments expand in the inner bash
    if ! getent hosts "$RV_PF_MASTER" >/dev/null 2>&1; then
      printf 'rv: preflight warning: %s does not resolve on %s; rendezvous port not checked\n' "$RV_PF_MASTER" "$node" >&2
    elif ! timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$RV_PF_MASTER" "$MASTER_PORT" 2>/dev/null; then
      _rv_pf_fail "cannot reach the rendezvous port $RV_PF_MASTER:$MASTER_PORT (firewall or network)"
      return 1
    fi
  fi
  end=$(date +%s%N)
  printf 'rv preflight: ok node=%s gpus=%s/%s driver=%s time_ms=%s\n' "$node" "$visible" "$n" "${driver:-unknown}" \
    "$(( (end - start) / 1000000 ))"
}

# The first known fault message in nvidia-smi's output, or nothing.
# shellcheck disable=SC2317
_rv_pf_fault_text() {
  local t
  for t in "No devices were found" "Driver/library version mismatch" "GPU has fallen off the bus" \
    "Unable to determine the device handle" "couldn't communicate with the NVIDIA driver"; do
    case $1 in *"$t"*) printf 'nvidia-smi: %s\n' "$t"; return 0 ;; esac
  done
}
)sh";

// The verdict file: the FAIL line, written before the job exits 96 (docs/preflight.md). rv
// re-fans out only when it finds this file; nothing else in the job writes it.
constexpr std::string_view k_verdict = R"sh(
RV_PF_VERDICT={{verdict}}
# shellcheck disable=SC2317
_rv_pf_verdict() {
  [ -n "$RV_PF_VERDICT" ] || return 0
  local f="$RV_PF_VERDICT.$SLURM_JOB_ID"
  (umask 077 && mkdir -p -- "${f%/*}" && printf '%s\n' "$1" >"$f") ||
    _rv_log "preflight warning: could not write the verdict file $f; rv will not re-fan out"
}
)sh";

constexpr std::string_view k_single = R"sh(
_rv_pf_line=$(_rv_pf_node)
_rv_pf_status=$?
printf '%s\n' "$_rv_pf_line" >&2
if [ "$_rv_pf_status" -ne 0 ]; then
  _rv_pf_verdict "$_rv_pf_line"
  _rv_log "preflight failed: the command does not run here; exit 96 (rv re-fans out without this node)"
  exit 96
fi
)sh";

// Multi-node: the batch shell (the first node) listens on MASTER_PORT while one srun task per
// node checks its GPUs and, from the other nodes, that port; then the drivers are compared.
constexpr std::string_view k_multi = R"sh(
RV_PF_MASTER=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
RV_PF_LISTENING=0
_rv_pf_listener=""
if command -v python3 >/dev/null 2>&1; then
  python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1]))); s.listen(64); s.settimeout(1); end = time.time() + 120
while time.time() < end:
    try: s.accept()[0].close()
    except OSError: pass
' "$MASTER_PORT" 2>/dev/null &
  _rv_pf_listener=$!
  # shellcheck disable=SC2034  # a counter only
  for _rv_pf_try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    if (: <"/dev/tcp/127.0.0.1/$MASTER_PORT") 2>/dev/null; then RV_PF_LISTENING=1; break; fi
    kill -0 "$_rv_pf_listener" 2>/dev/null || break
    sleep 0.25
  done
else
  _rv_log "preflight warning: no python3 on the first node; rendezvous port not checked"
fi
export RV_PF_MASTER RV_PF_LISTENING RV_PREFLIGHT_REQUIRED RV_PREFLIGHT_SITE_CHECK
export -f _rv_pf_node _rv_pf_fault_text
# --overlap: the check step never holds the job's CPUs or memory from the command's step, which
# starts the moment srun returns, before the controller may have released this step (Slurm 24.11
# then refused the command's step: "Memory required by task is not available"; docs/slurm-quirks.md).
_rv_pf_lines=$(srun --overlap --nodes={{nodes}} --ntasks={{nodes}} --ntasks-per-node=1 --cpus-per-task=1 --kill-on-bad-exit=0 \
  --export=ALL bash -c _rv_pf_node)
_rv_pf_srun=$?
[ -z "$_rv_pf_listener" ] || kill "$_rv_pf_listener" 2>/dev/null
[ -z "$_rv_pf_listener" ] || wait "$_rv_pf_listener" 2>/dev/null
printf '%s\n' "$_rv_pf_lines" >&2
_rv_pf_failed=$(printf '%s\n' "$_rv_pf_lines" | grep -m 1 '^rv preflight: FAIL ')
if [ -z "$_rv_pf_failed" ]; then
  # Every node must run the same driver: name the first node whose driver differs from node 0's.
  _rv_pf_failed=$(printf '%s\n' "$_rv_pf_lines" | awk '
    /^rv preflight: ok / { n = ""; d = ""
      for (i = 1; i <= NF; i++) { if ($i ~ /^node=/) n = substr($i, 6); if ($i ~ /^driver=/) d = substr($i, 8) }
      if (d == "unknown") next
      if (first == "") { first = d; fn = n; next }
      if (d != first) { printf "rv preflight: FAIL node=%s reason=driver %s differs from %s on %s\n", n, d, first, fn; exit } }')
  [ -z "$_rv_pf_failed" ] || printf '%s\n' "$_rv_pf_failed" >&2
fi
if [ -n "$_rv_pf_failed" ]; then
  _rv_pf_verdict "$_rv_pf_failed"
  _rv_log "preflight failed: the command does not run; exit 96 (rv re-fans out without the node)"
  exit 96
fi
if [ "$_rv_pf_srun" -ne 0 ]; then
  _rv_log "preflight warning: the check step exited $_rv_pf_srun on some node; going on"
fi
)sh";

} // namespace

std::string preflight_verdict_function(const Context& ctx)
{
  const auto& o = ctx.options;
  const auto verdict = o.request_id.empty() ? std::string() : preflight_verdict_path(o.remote_root, o.request_id, "");
  return fill(k_verdict, {{"verdict", proc::shell_quote(verdict.substr(0, verdict.size() - 1))}});
}

std::string preflight(const Context& ctx)
{
  const auto& o = ctx.options;
  const auto& s = ctx.strategy;
  if (!o.preflight || ctx.step || (s.gpus_per_node <= 0 && s.gres.empty())) {
    return {}; // turned off, a step of a running allocation, or a job without GPUs
  }
  std::string out = preflight_node_script(o.preflight_command, o.preflight_required);
  out += preflight_verdict_function(ctx);
  if (ctx.multi_node) {
    out += fill(k_multi, {{"nodes", std::to_string(s.nodes)}});
  } else {
    out += k_single;
  }
  return out;
}

} // namespace rv::templates::detail

namespace rv::templates {

std::string preflight_node_script(const std::string& site_check, bool required)
{
  return detail::fill(detail::k_node_check,
                      {{"required", required ? "1" : "0"}, {"site_check", proc::shell_quote(site_check)}});
}

std::string preflight_verdict_path(const std::string& remote_root, const std::string& request_id,
                                   const std::string& job_id)
{
  return remote_root + "/requests/" + request_id + "/preflight." + job_id;
}

} // namespace rv::templates
