// Checkpoint segments: run the command until shortly before the allocation ends (or the requested
// total is used up), signal it, let it exit, then requeue or resubmit this script.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rv::templates::detail {
namespace {

constexpr std::string_view k_checkpoint = R"sh(
# ---- checkpoint segments (docs/templates.md, "Checkpoint protocol") ----
export RV_SIGNAL={{signal}}
export RV_TOTAL_REQUESTED_S={{total_s}}
RV_SIGNAL_LEAD_S={{lead_s}}
export RV_CLAIM_OWNER="${RV_CLAIM_OWNER:-$SLURM_JOB_ID}"
RV_STATE_DIR="$RV_CHECKPOINT_DIR/.rv/"{{state_key}}
mkdir -p -- "$RV_STATE_DIR" || { _rv_log "error: cannot create $RV_STATE_DIR"; exit 1; }

_rv_read_int() {
  local v
  v=$(cat -- "$1" 2>/dev/null)
  case "$v" in '' | *[!0-9]*) echo 0 ;; *) echo "$v" ;; esac
}
_rv_write_int() { printf '%s\n' "$2" >"$1.tmp.$$" && mv -f -- "$1.tmp.$$" "$1"; }

# Forwards the checkpoint signal to the command's process group, once. Inside an srun task
# (RV_IN_TASK=1) Slurm has delivered it to every process of the step already: only record it.
_rv_forward() {
  _rv_signalled=1
  if [ "${RV_IN_TASK:-0}" = 0 ] && [ -n "${_rv_child:-}" ] && [ "${_rv_forwarded:-0}" = 0 ]; then
    _rv_forwarded=1
    _rv_log "sending SIG$RV_SIGNAL to the command"
    kill -s "$RV_SIGNAL" -- "-$_rv_child" 2>/dev/null
  fi
}

# Runs "$@" in its own process group and waits until the whole group has exited (children of a
# compound command included). Sets _rv_status, and _rv_signalled=1 once the signal came
# (also before the command started: it is then forwarded as soon as the command runs).
_rv_run_group() {
  _rv_signalled="${_rv_signalled:-0}" _rv_forwarded=0 _rv_child=""
  trap _rv_forward "$RV_SIGNAL"
  set -m
  "$@" &
  _rv_child=$!
  set +m
  [ "$_rv_signalled" = 0 ] || _rv_forward
  # Poll, then wait once: a trap that interrupts `wait` can lose the status (bash 5.2 gives -1).
  while kill -0 "$_rv_child" 2>/dev/null; do sleep 1; done
  wait "$_rv_child"
  _rv_status=$?
  while kill -0 -- "-$_rv_child" 2>/dev/null; do sleep 1; done
  trap - "$RV_SIGNAL"
}
export -f _rv_forward _rv_run_group

RV_ELAPSED_S=$(_rv_read_int "$RV_STATE_DIR/elapsed_s")
RV_SEGMENT=$(( $(_rv_read_int "$RV_STATE_DIR/segments") + 1 ))
export RV_ELAPSED_S RV_SEGMENT
if [ "$RV_ELAPSED_S" -ge "$RV_TOTAL_REQUESTED_S" ]; then
  _rv_log "requested total of ${RV_TOTAL_REQUESTED_S}s already reached; nothing to run"
  exit 0
fi
_rv_write_int "$RV_STATE_DIR/segments" "$RV_SEGMENT"

# When to signal: the real end of the allocation minus the lead (Slurm's own --signal is the
# backstop), at least 30 s from now, and no later than the rest of the requested total.
_rv_start=$(date +%s)
_rv_delay=$(( RV_JOB_END_TIME - RV_SIGNAL_LEAD_S - _rv_start ))
[ "$_rv_delay" -ge 30 ] || _rv_delay=30
_rv_left=$(( RV_TOTAL_REQUESTED_S - RV_ELAPSED_S ))
[ "$_rv_left" -ge "$_rv_delay" ] || _rv_delay=$_rv_left
_rv_log "segment $RV_SEGMENT of job $SLURM_JOB_ID: ${RV_ELAPSED_S}s of ${RV_TOTAL_REQUESTED_S}s done; SIG$RV_SIGNAL in ${_rv_delay}s"

set -m
( sleep "$_rv_delay"; kill -s "$RV_SIGNAL" "$$" ) >/dev/null 2>&1 &
_rv_watchdog=$!
set +m
{{run}}
kill -- "-$_rv_watchdog" 2>/dev/null
{{outputs}}
RV_ELAPSED_S=$(( RV_ELAPSED_S + $(date +%s) - _rv_start ))
_rv_write_int "$RV_STATE_DIR/elapsed_s" "$RV_ELAPSED_S" ||
  _rv_log "warning: cannot record the elapsed time in $RV_STATE_DIR"
if [ "$_rv_signalled" = 0 ]; then
  if [ "$_rv_status" -eq 0 ]; then
    _rv_log "command finished after ${RV_ELAPSED_S}s in $RV_SEGMENT segment(s)"
  else
    _rv_log "command failed with status $_rv_status before any checkpoint signal; not continuing"
  fi
{{notify_end}}  exit "$_rv_status"
fi
if [ "$RV_ELAPSED_S" -ge "$RV_TOTAL_REQUESTED_S" ]; then
  _rv_log "requested total of ${RV_TOTAL_REQUESTED_S}s reached (status $_rv_status); not continuing"
{{notify_end}}  exit "$_rv_status"
fi
_rv_log "segment $RV_SEGMENT stopped by SIG$RV_SIGNAL (status $_rv_status); ${RV_ELAPSED_S}s of ${RV_TOTAL_REQUESTED_S}s done"
{{notify_resubmit}}{{continue}}
_rv_next=$(sbatch --parsable --export=ALL,RV_CLAIM_OWNER="$RV_CLAIM_OWNER" "$0") || {
  _rv_log "error: could not resubmit $0; the next segment must be started by hand"
  exit 1
}
_rv_log "resubmitted as job $_rv_next"
# Tells `rv run -f` which job to follow next (the claim's directory is the request's).
if [ -n "${RV_CLAIM_DIR:-}" ]; then
  printf '%s\n' "$_rv_next" >"${RV_CLAIM_DIR%/*}/next.$SLURM_JOB_ID" || _rv_log "warning: could not record the next segment"
fi
exit 0
)sh";

constexpr std::string_view k_requeue =
    R"sh(# Slurm stops this script as soon as the requeue is accepted: everything is recorded above.
_rv_log "requeueing job $SLURM_JOB_ID for the next segment"
if scontrol requeue "$SLURM_JOB_ID"; then
  exit 0
fi
_rv_log "warning: scontrol requeue failed; resubmitting the script instead")sh";

} // namespace

std::string checkpoint_body(const Context& ctx)
{
  const auto& o = ctx.options;
  std::string run = ctx.multi_node ? "_rv_run_group " + srun_line(ctx)
                                   : "_rv_run_group " + container_prefix(ctx, false) + "bash -c \"$RV_COMMAND\"";
  std::string state_key =
      o.request_id.empty() ? std::string("\"job-$RV_CLAIM_OWNER\"") : proc::shell_quote(o.request_id);
  return fill(k_checkpoint, {{"signal", ctx.signal},
                             {"total_s", std::to_string(ctx.strategy.total_time_s > 0 ? ctx.strategy.total_time_s
                                                                                      : ctx.request.time_s)},
                             {"lead_s", std::to_string(ctx.signal_lead_s)},
                             {"state_key", state_key},
                             {"run", run},
                             {"outputs", copy_outputs(ctx)},
                             {"continue", o.use_requeue ? std::string(k_requeue) : std::string()},
                             {"notify_end", notify_end(ctx).empty() ? std::string() : "  " + notify_end(ctx)},
                             {"notify_resubmit", notify_resubmit(ctx)}});
}

} // namespace rv::templates::detail
