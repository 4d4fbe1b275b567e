// The in-job race guard of a fan-out request: the first script to start claims the request,
// cancels its siblings and runs; any other sibling that starts cancels itself. Across clusters,
// the claimer then waits at the gate until rv chooses its cluster.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

namespace rv::templates::detail {
namespace {

constexpr std::string_view k_guard = R"sh(
# ---- fan-out race guard (docs/templates.md, "Guard protocol") ----
RV_CLAIM_DIR={{claim_dir}}

# Cancels the other jobs of this request: same user, comment rv:<request id>, not this job.
_rv_cancel_siblings() {
  local user="${SLURM_JOB_USER:-${USER:-}}" id comment
  [ -n "$user" ] || user=$(id -un)
  squeue -h -u "$user" -o '%i %k' 2>/dev/null | while read -r id comment; do
    if [ "$comment" = {{comment}} ] && [ "$id" != "$SLURM_JOB_ID" ]; then
      _rv_log "cancelling sibling job $id of request $RV_REQUEST_ID"
      scancel "$id" || _rv_log "warning: scancel $id failed"
    fi
  done
}

# A tie: siblings that start within the settle time of each other. Each announces its rank, waits,
# and yields to a better-ranked sibling that also started (the plan ranked it cheaper or sooner);
# the best-ranked one yields to nobody, so it claims at once. Prints the better rank that started.
_rv_better_started() {
  local f r best=""
  for f in "${RV_CLAIM_DIR%/*}"/started.*; do
    [ -e "$f" ] || continue
    r=${f##*.}
    case $r in '' | *[!0-9]*) continue ;; esac
    if [ "$r" -lt "$RV_STRATEGY_RANK" ] && { [ -z "$best" ] || [ "$r" -lt "$best" ]; }; then best=$r; fi
  done
  printf '%s' "$best"
}

# Claims the request with an atomic mkdir on the shared filesystem. The winner records its job
# id in the claim; a later segment of the winner (requeued: same job id; resubmitted: carries
# RV_CLAIM_OWNER) proceeds. Anything else is a duplicate: it cancels itself and exits 0.
_rv_guard() {
  local owner="" waited=0 better=""
  if ! mkdir -p -- "${RV_CLAIM_DIR%/*}"; then
    _rv_log "error: cannot create ${RV_CLAIM_DIR%/*}; not running to avoid a duplicate run"
    exit 1
  fi
  if [ "$RV_STRATEGY_COUNT" -gt 1 ] && [ ! -e "$RV_CLAIM_DIR" ] && [ -z "${RV_CLAIM_OWNER:-}" ]; then
    : >"${RV_CLAIM_DIR%/*}/started.$RV_STRATEGY_RANK"
    [ "$RV_STRATEGY_RANK" -le 1 ] || sleep "$RV_TIE_SETTLE_S"
    better=$(_rv_better_started)
    if [ -n "$better" ] && [ ! -e "$RV_CLAIM_DIR" ]; then
      _rv_log "strategy $better (ranked better) started too; job $SLURM_JOB_ID (rank $RV_STRATEGY_RANK) yields and cancels itself"
      scancel "$SLURM_JOB_ID"
      exit 0
    fi
  fi
  if mkdir -- "$RV_CLAIM_DIR" 2>/dev/null; then
    printf '%s\n' "$SLURM_JOB_ID" >"$RV_CLAIM_DIR/owner.$SLURM_JOB_ID" &&
      mv -f -- "$RV_CLAIM_DIR/owner.$SLURM_JOB_ID" "$RV_CLAIM_DIR/owner"
    export RV_CLAIM_OWNER="$SLURM_JOB_ID"
    _rv_log "job $SLURM_JOB_ID won request $RV_REQUEST_ID"
    _rv_cancel_siblings
    return 0
  fi
  while [ ! -s "$RV_CLAIM_DIR/owner" ] && [ "$waited" -lt 60 ]; do
    sleep 1
    waited=$(( waited + 1 ))
  done
  owner=$(cat -- "$RV_CLAIM_DIR/owner" 2>/dev/null)
  if [ -n "$owner" ] && { [ "$owner" = "$SLURM_JOB_ID" ] || [ "$owner" = "${RV_CLAIM_OWNER:-}" ]; }; then
    export RV_CLAIM_OWNER="$owner"
    _rv_log "job $SLURM_JOB_ID continues request $RV_REQUEST_ID (claimed by job $owner)"
    return 0
  fi
  _rv_log "request $RV_REQUEST_ID already claimed by job ${owner:-unknown}; job $SLURM_JOB_ID cancels itself"
  scancel "$SLURM_JOB_ID"
  exit 0
}
RV_REQUEST_ID={{request_id}}
RV_STRATEGY_RANK={{rank}}
RV_STRATEGY_COUNT={{count}}
RV_TIE_SETTLE_S=${RV_TIE_SETTLE_S:-2}
_rv_guard
)sh";

// Across clusters no file system is shared: the claim above settles this cluster only. rv, the one
// process that sees every cluster, chooses one and writes `go` in that cluster's request directory
// (and `stop` in the others'). The claimer runs nothing of the user's before `go`; after `stop`, or
// after the wait with neither (rv died, the laptop sleeps), it ends with exit {{exit}}.
constexpr std::string_view k_gate = R"sh(
# ---- cross-cluster gate (docs/multi-cluster.md) ----
# Looks every 0.2 s (a file test: nothing asks Slurm), so the command starts right after `go`.
_rv_gate() {
  local d="${RV_CLAIM_DIR%/*}" ticks=0
  while [ "$ticks" -lt $(( {{wait}} * 5 )) ]; do
    if [ -e "$d/go" ]; then
      [ "$ticks" -eq 0 ] || _rv_log "rv chose this cluster for request $RV_REQUEST_ID after $(( ticks / 5 ))s"
      return 0
    fi
    if [ -e "$d/stop" ]; then
      _rv_log "rv chose another cluster for request $RV_REQUEST_ID: job $SLURM_JOB_ID ends without running the command (exit {{exit}})"
      exit {{exit}}
    fi
    sleep 0.2
    ticks=$(( ticks + 1 ))
  done
  _rv_log "rv did not choose job $SLURM_JOB_ID within {{wait}}s: it ends without running the command (exit {{exit}})"
  exit {{exit}}
}
_rv_gate
)sh";

} // namespace

std::string guard(const Context& ctx)
{
  const auto& o = ctx.options;
  if (o.request_id.empty() || !o.study.tasks.empty()) {
    return {}; // a study's workers claim tasks, not the request (templates/study.cpp)
  }
  std::string gate;
  if (o.gate_wait_s > 0) {
    gate = fill(k_gate, {{"wait", std::to_string(o.gate_wait_s)}, {"exit", std::to_string(k_not_chosen_exit)}});
  }
  return fill(k_guard, {{"claim_dir", proc::shell_quote(o.remote_root + "/requests/" + o.request_id + "/claim")},
                        {"comment", proc::shell_quote("rv:" + o.request_id)},
                        {"request_id", proc::shell_quote(o.request_id)},
                        {"rank", std::to_string(o.strategy_rank)},
                        {"count", std::to_string(o.strategy_count)}}) +
         gate;
}

} // namespace rv::templates::detail
