// The idle and hang watchdog of the job script (docs/gpu.md, "The watchdog"): every node samples
// its GPUs (nvidia-smi under a timeout) and the job's log size into the request's watchdog
// directory; the batch shell reads the samples and, with --idle-timeout, ends a job that stayed
// idle (exit 95) or, multi-node, hung (exit 94). No nvidia-smi: no samples, no error.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

namespace rv::templates::detail {
namespace {

using proc::shell_quote;

// Functions every node needs (exported to the srun tasks of multi-node jobs).
constexpr std::string_view k_sampler = R"sh(
# ---- GPU watchdog (docs/gpu.md): samples, and with --idle-timeout ends an idle or hung job ----
export RV_WD_DIR={{dir}}
export RV_WD_INTERVAL={{interval}} RV_WD_SMI_TIMEOUT={{smi_timeout}} RV_WD_KEEP={{keep}}
export RV_WD_LOGS={{logs}}
# The size of this job's logs in bytes (.out, .err and the per-node logs).
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_log_bytes() {
  local f s n=0
  for f in "$RV_WD_LOGS$SLURM_JOB_ID".*; do
    [ -f "$f" ] && s=$(stat -c %s -- "$f" 2>/dev/null) && n=$(( n + s ))
  done
  echo "$n"
}
# One line: t=<epoch> job=<id> util=<%,...> mem=<MiB,...> log=<bytes>; util and mem are "-" when
# nvidia-smi failed or hung, "?" for a GPU that reports no value ([N/A] in MIG mode). Only the
# job's own GPUs: where nvidia-smi lists more than Slurm granted (no ConstrainDevices), those whose
# index is in SLURM_STEP_GPUS (else SLURM_JOB_GPUS); under device constraints NVML lists only the
# job's GPUs, renumbered from 0, and every one is the job's.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_sample() {
  local out i u m util="" mem="" own="${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}}"
  if out=$(timeout -k 2 "$RV_WD_SMI_TIMEOUT" nvidia-smi --query-gpu=index,utilization.gpu,memory.used \
    --format=csv,noheader,nounits 2>/dev/null) && [ -n "$out" ]; then
    [ -n "$own" ] && [ "$(printf '%s\n' "$out" | grep -c .)" -gt "$(tr ',' '\n' <<<"$own" | grep -c .)" ] ||
      own=""
    while IFS=', ' read -r i u m; do
      [ -n "$i" ] || continue
      if [ -n "$own" ]; then case ",$own," in *",$i,"*) ;; *) continue ;; esac; fi
      case $u in '' | *[!0-9]*) u='?' ;; esac
      case $m in '' | *[!0-9]*) m='?' ;; esac
      util="${util:+$util,}$u" mem="${mem:+$mem,}$m"
    done <<<"$out"
  fi
  printf 't=%s job=%s util=%s mem=%s log=%s\n' "$(date +%s)" "$SLURM_JOB_ID" "${util:--}" "${mem:--}" "$(_rv_wd_log_bytes)"
}
# Samples this node every RV_WD_INTERVAL seconds while process $1 lives, into <node>.samples
# (cut to its last RV_WD_KEEP lines at twice that). Without nvidia-smi it does nothing.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_sampler() {
  local f n=0
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  mkdir -p -- "$RV_WD_DIR" 2>/dev/null || return 0
  f="$RV_WD_DIR/${SLURMD_NODENAME:-$(hostname)}.samples"
  [ -f "$f" ] && n=$(wc -l <"$f")
  while kill -0 "$1" 2>/dev/null; do
    _rv_wd_sample >>"$f"
    n=$(( n + 1 ))
    if [ "$n" -ge $(( 2 * RV_WD_KEEP )) ] && tail -n "$RV_WD_KEEP" -- "$f" >"$f.tmp.$$"; then
      mv -f -- "$f.tmp.$$" "$f"
      n=$RV_WD_KEEP
    fi
    sleep "$RV_WD_INTERVAL"
  done
}
export -f _rv_wd_log_bytes _rv_wd_sample _rv_wd_sampler
)sh";

// The batch shell's part: the verdict over every node's latest sample, and the end of the job.
constexpr std::string_view k_decider = R"sh(RV_WD_TIMEOUT={{timeout}}  # 0: samples only
RV_WD_WARN={{warn}}        # seconds idle before the warning (rv up); 0: none
RV_WD_HANG={{hang}}        # 1: a multi-node job whose log and GPUs stay unchanged is hung
# Every descendant of process $1 except process $2 and its own descendants.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_descendants() {
  local f pid k v found=" $1 " more=1
  local -A parent=()
  for f in /proc/[0-9]*/status; do
    pid=${f#/proc/} && pid=${pid%/status}
    while read -r k v; do
      if [ "$k" = PPid: ]; then parent[$pid]=$v && break; fi
    done 2>/dev/null <"$f"
  done
  while [ "$more" = 1 ]; do
    more=0
    for pid in "${!parent[@]}"; do
      case $found in *" $pid "*) continue ;; esac
      [ "$pid" != "$2" ] || continue
      case $found in *" ${parent[$pid]} "*) found="$found$pid " && more=1 ;; esac
    done
  done
  for pid in $found; do [ "$pid" = "$1" ] || echo "$pid"; done
}
# Ends the job: the reason in both logs, the exit code for the batch shell's EXIT trap, then the
# command stopped (TERM, KILL 10 s later); the batch shell then exits with code $1.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_end() {
  local p me=$BASHPID
  printf 'rv: watchdog: %s; ending the job (exit %s)\n' "$2" "$1"
  printf 'rv: watchdog: %s; ending the job (exit %s)\n' "$2" "$1" >&2
  printf '%s %s\n' "$1" "$2" >"$RV_WD_DIR/ended.$SLURM_JOB_ID"
  for p in $(_rv_wd_descendants "$3" "$me"); do kill -TERM "$p" 2>/dev/null; done
  sleep 10
  for p in $(_rv_wd_descendants "$3" "$me"); do kill -KILL "$p" 2>/dev/null; done
}
# Reads every node's latest sample each interval while process $1 lives. Idle: every GPU of every
# node at 0 %. Flat: the samples and the log size the same as the interval before. Missing,
# stale or failed samples are neither.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_decider() {
  local nodes node line t job util mem now sig prev="" prev_t=0 idle_since=0 flat_since=0 fresh idle warned=0
  local w="$RV_WD_DIR/warning.$SLURM_JOB_ID"
  nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null)
  [ -n "$nodes" ] || nodes=${SLURMD_NODENAME:-$(hostname)}
  while kill -0 "$1" 2>/dev/null; do
    sleep "$RV_WD_INTERVAL"
    now=$(date +%s) fresh=1 idle=1 sig=""
    for node in $nodes; do
      line=$(tail -n 1 -- "$RV_WD_DIR/$node.samples" 2>/dev/null)
      read -r t job util mem _ <<<"$line"
      t=${t#t=} job=${job#job=} util=${util#util=} mem=${mem#mem=}
      case $t in '' | *[!0-9]*) fresh=0 && break ;; esac
      if [ "$job" != "$SLURM_JOB_ID" ] || [ $(( now - t )) -gt $(( 3 * RV_WD_INTERVAL + RV_WD_SMI_TIMEOUT )) ]; then
        fresh=0 && break
      fi
      [[ $util =~ ^0(,0)*$ ]] || idle=0
      [[ $util =~ ^[0-9]+(,[0-9]+)*$ && $mem =~ ^[0-9]+(,[0-9]+)*$ ]] || fresh=0
      sig="$sig $node:$util:$mem"
    done
    [ "$fresh" = 1 ] || idle=0
    sig="$sig log:$(_rv_wd_log_bytes)"
    if [ "$idle" = 1 ]; then [ "$idle_since" -gt 0 ] || idle_since=$now; else idle_since=0 warned=0 && rm -f -- "$w"; fi
    if [ "$fresh" = 1 ] && [ "$sig" = "$prev" ]; then [ "$flat_since" -gt 0 ] || flat_since=$prev_t; else flat_since=0; fi
    prev=$sig prev_t=$now
    [ "$RV_WD_TIMEOUT" -gt 0 ] || continue
    if [ "$RV_WD_HANG" = 1 ] && [ "$flat_since" -gt 0 ] && [ $(( now - flat_since )) -ge "$RV_WD_TIMEOUT" ]; then
      _rv_wd_end {{exit_hang}} "hang? the log and every GPU of every node unchanged for $(( now - flat_since )) s (--idle-timeout ${RV_WD_TIMEOUT}s)" "$1"
      return
    fi
    if [ "$idle_since" -gt 0 ] && [ $(( now - idle_since )) -ge "$RV_WD_TIMEOUT" ]; then
      _rv_wd_end {{exit_idle}} "every GPU at 0 % for $(( now - idle_since )) s (--idle-timeout ${RV_WD_TIMEOUT}s)" "$1"
      return
    fi
    if [ "$RV_WD_WARN" -gt 0 ] && [ "$idle_since" -gt 0 ] && [ "$warned" = 0 ] && [ $(( now - idle_since )) -ge "$RV_WD_WARN" ]; then
      warned=1
      printf 'every GPU has been at 0 %% for %s s: this allocation ends in %s s unless a GPU is used (--idle-timeout %ss)\n' \
        "$(( now - idle_since ))" "$(( RV_WD_TIMEOUT - now + idle_since ))" "$RV_WD_TIMEOUT" >"$w"
      _rv_log "watchdog warning: $(cat -- "$w")"
    fi
  done
}
# The job's exit code is the watchdog's when it ended the job.
# shellcheck disable=SC2317  # run by srun, a trap or in the background
_rv_wd_exit() {
  local status=$? code=""
  # shellcheck disable=SC2086  # one word per pid
  [ -z "${_rv_wd_pids:-}" ] || kill $_rv_wd_pids 2>/dev/null
  [ -r "$RV_WD_DIR/ended.$SLURM_JOB_ID" ] && read -r code _ <"$RV_WD_DIR/ended.$SLURM_JOB_ID"
  case $code in '' | *[!0-9]*) exit "$status" ;; *) exit "$code" ;; esac
}
rm -f -- "$RV_WD_DIR/ended.$SLURM_JOB_ID" "$RV_WD_DIR/warning.$SLURM_JOB_ID"
trap _rv_wd_exit EXIT
{{start_sampler}}_rv_wd_decider "$$" </dev/null &
_rv_wd_pids="$_rv_wd_pids $!"
)sh";

// `rv up`'s step: the watchdog's warning, shown in the user's terminal when it comes.
constexpr std::string_view k_notice = R"sh(
# ---- the GPU watchdog's warning (rv up --idle-timeout), shown here when it comes ----
(
  _rv_wd_seen=""
  while kill -0 "$$" 2>/dev/null; do
    _rv_wd_now=$(cat -- {{warning}}."$SLURM_JOB_ID" 2>/dev/null)
    [ -z "$_rv_wd_now" ] || [ "$_rv_wd_now" = "$_rv_wd_seen" ] || printf '\r\nrv: watchdog: %s\r\n' "$_rv_wd_now" >&2
    _rv_wd_seen=$_rv_wd_now
    sleep 5
  done
) </dev/null &
)sh";

bool has_gpus(const Context& ctx)
{
  return ctx.strategy.gpus_per_node > 0 || !ctx.strategy.gres.empty();
}

bool enabled(const Context& ctx)
{
  return ctx.options.watchdog.interval_s > 0 && !ctx.options.request_id.empty() && has_gpus(ctx);
}

} // namespace

std::string watchdog(const Context& ctx)
{
  if (!enabled(ctx)) {
    return {};
  }
  const auto& o = ctx.options;
  const auto& w = o.watchdog;
  const auto dir = watchdog_dir(o.remote_root, o.request_id);
  if (ctx.step) {
    return w.interactive && w.idle_timeout_s > 0 ? fill(k_notice, {{"warning", shell_quote(dir + "/warning")}})
                                                 : std::string();
  }
  std::string out = fill(k_sampler, {{"dir", shell_quote(dir)},
                                     {"interval", std::to_string(w.interval_s)},
                                     {"smi_timeout", std::to_string(w.nvidia_smi_timeout_s)},
                                     {"keep", std::to_string(k_samples_kept)},
                                     {"logs", shell_quote(o.log_dir + "/" + ctx.job_name + "-")}});
  const auto warn = w.interactive && w.idle_timeout_s > 0 ? w.idle_timeout_s * 4 / 5 : 0;
  out += fill(k_decider, {{"timeout", std::to_string(w.idle_timeout_s)},
                          {"warn", std::to_string(warn)},
                          {"hang", ctx.multi_node && !w.interactive ? "1" : "0"},
                          {"exit_idle", std::to_string(k_exit_idle)},
                          {"exit_hang", std::to_string(k_exit_hang)},
                          // multi-node: each srun task samples its node (watchdog_task)
                          {"start_sampler", ctx.multi_node ? "_rv_wd_pids=\"\"\n"
                                                           : "_rv_wd_sampler \"$$\" </dev/null &\n"
                                                             "_rv_wd_pids=\"$!\"\n"}});
  return out;
}

std::string watchdog_task(const Context& ctx)
{
  return enabled(ctx) && !ctx.step ? "  _rv_wd_sampler \"$$\" </dev/null >/dev/null 2>&1 &\n" : std::string();
}

} // namespace rv::templates::detail
