// A study's worker (docs/studies.md): the job does not race its siblings for the request; it
// claims tasks, one at a time, in <root>/requests/<id>/tasks, the same shared directory the fan-out
// guard claims the request in (templates/guard.cpp), and with the same kind of atomic step: a
// rename of a directory that already holds the claimer's job id onto the task's next attempt.

#include "core/process/shell.hpp"
#include "templates/detail.hpp"

#include <fmt/format.h>

namespace rv::templates::detail {
namespace {

// Whether a job that holds something on the shared filesystem (a study task's attempt, a container
// image's pull lock) still lives; one definition for every template that asks.
constexpr std::string_view k_job_alive =
    R"sh(# Whether job $1, the claimer of an attempt without an exit, still lives. This job's own id means
# an earlier run of it (requeued): that run is over. squeue failing for another reason: alive.
_rv_job_alive() {
  local st
  [ "$1" != "$SLURM_JOB_ID" ] || return 1
  if ! st=$(squeue -h -j "$1" -o %T 2>&1); then
    case $st in *"Invalid job id"*) return 1 ;; *) return 0 ;; esac
  fi
  case $st in
    '' | COMPLETED | CANCELLED* | FAILED | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) return 1 ;;
  esac
  return 0
}
)sh";

constexpr std::string_view k_worker = R"sh(
# ---- study worker (docs/studies.md, "Workers and claiming") ----
# Each task <t> has a directory $RV_TASKS_DIR/<t>; attempt <k> of it is the directory a<k>, holding
# `job` (the claimer's job id), `start`, `out` (the task's output) and, once it ended, `exit`
# ("<status> <end>", or "lost <end>" when its worker died). `done` marks a task that is over.
RV_TASKS_DIR={{tasks_dir}}
RV_TASK_TIME_S={{task_time_s}}
RV_TASK_ATTEMPTS={{attempts}}
RV_RETRY_FAILED={{retry_failed}}
RV_TASK_IDS={{task_ids}}
export RV_TASK_COUNT={{task_count}}

# Sets RV_COMMAND and the RV_SWEEP_* variables of task $1.
# shellcheck disable=SC2016,SC1003  # each command line is for bash -c, quoted for this shell
_rv_task_setup() {
{{unset}}  case $1 in
{{cases}}  *) return 1 ;;
  esac
}

)sh";

// On one cluster a worker claims tasks by itself (a rename onto the next attempt), retries a dead
// worker's task and cancels the pending workers once nothing is left.
constexpr std::string_view k_claim_self =
    R"sh({{job_alive}}
# The latest attempt of task directory $1 (0 = none).
_rv_last_attempt() {
  local k=0
  while [ -d "$1/a$(( k + 1 ))" ]; do k=$(( k + 1 )); done
  echo "$k"
}

# Claims attempt $2 of task directory $1: a directory holding this job's id, renamed onto a$2.
# rename(2) onto an existing non-empty directory fails, so exactly one claimer wins.
_rv_claim() {
  local tmp="$1/.claim.$SLURM_JOB_ID"
  rm -rf -- "$tmp"
  mkdir -p -- "$tmp" && printf '%s\n' "$SLURM_JOB_ID" >"$tmp/job" || return 1
  if mv -T -- "$tmp" "$1/a$2" 2>/dev/null; then
    date +%s >"$1/a$2/start"
    return 0
  fi
  rm -rf -- "$tmp"
  return 1
}

# Claims the next task this worker may run and prints "<task> <attempt>"; fails when none is left
# to claim. Fresh tasks first; then tasks whose worker died (or, with --retry-failed, that failed)
# with attempts left. A task over for good gets `done`.
_rv_claim_next() {
  local pass t d k e owner
  for pass in fresh again; do
    for t in $RV_TASK_IDS; do
      d="$RV_TASKS_DIR/$t"
      [ ! -e "$d/done" ] || continue
      mkdir -p -- "$d" || continue
      k=$(_rv_last_attempt "$d")
      if [ "$k" -eq 0 ]; then
        [ "$pass" = fresh ] || continue
      else
        [ "$pass" = again ] || continue
        e=$(cat -- "$d/a$k/exit" 2>/dev/null)
        if [ -z "$e" ]; then
          owner=$(cat -- "$d/a$k/job" 2>/dev/null)
          if [ -z "$owner" ] || _rv_job_alive "$owner"; then continue; fi
          # The owner may have written its exit after the read above and then ended: "lost" is
          # written only where no exit is (noclobber: O_EXCL), else the owner's exit is read again.
          # (Overwritten, a task that had run was run a second time: test_study, 2026-11-29.)
          if (set -C && printf 'lost %s\n' "$(date +%s)" >"$d/a$k/exit") 2>/dev/null; then
            _rv_log "task $t: job $owner ended during attempt $k"
            e=lost
          else
            e=$(cat -- "$d/a$k/exit" 2>/dev/null)
          fi
        fi
        if [ "${e%% *}" = 0 ] || { [ "$e" != lost ] && [ "$RV_RETRY_FAILED" != 1 ]; } || [ "$k" -ge "$RV_TASK_ATTEMPTS" ]; then
          : >"$d/done"
          continue
        fi
      fi
      if _rv_claim "$d" $(( k + 1 )); then
        printf '%s %s\n' "$t" $(( k + 1 ))
        return 0
      fi
    done
  done
  return 1
}

# Whether a task still waits for a worker: not `done`, and no attempt yet, or its last attempt
# ended (a failure to retry) or lost its worker. Tasks in flight on live workers do not.
_rv_any_waiting() {
  local t d k owner
  for t in $RV_TASK_IDS; do
    d="$RV_TASKS_DIR/$t"
    [ ! -e "$d/done" ] || continue
    k=$(_rv_last_attempt "$d")
    [ "$k" -gt 0 ] && [ ! -e "$d/a$k/exit" ] || return 0
    owner=$(cat -- "$d/a$k/job" 2>/dev/null)
    [ -z "$owner" ] || _rv_job_alive "$owner" || return 0
  done
  return 1
}

# The queue is empty: the request's workers still pending have nothing to do; cancel them.
_rv_cancel_pending_workers() {
  local user="${SLURM_JOB_USER:-${USER:-}}" id comment
  [ -n "$user" ] || user=$(id -un)
  squeue -h -u "$user" -t PENDING -o '%i %k' 2>/dev/null | while read -r id comment; do
    if [ "$comment" = {{comment}} ] && [ "$id" != "$SLURM_JOB_ID" ]; then
      _rv_log "no task left to claim: cancelling pending worker $id of study $RV_REQUEST_ID"
      scancel "$id" || _rv_log "warning: scancel $id failed"
    fi
  done
}

)sh";

// What every worker runs a task with, and how a signal ends it.
constexpr std::string_view k_worker_tail =
    R"sh(# Runs attempt $2 of task $1 in a subshell (a task's `cd` or `exit` stays its own), its output in
# the attempt's `out`; records "<status> <end>" in `exit` (written whole, then renamed).
_rv_run_task() {
  local t=$1 k=$2 d="$RV_TASKS_DIR/$1" status
  export RV_TASK_ID="$t" RV_TASK_ATTEMPT="$k"
  if ! _rv_task_setup "$t"; then
    _rv_log "error: task $t is not one of this study's"
    status=127
  else
    _rv_log "task $t (attempt $k) starts on job $SLURM_JOB_ID"
    set -m # the task in its own process group: the trap below ends all of it
    ( {{run}}bash -c "$RV_COMMAND" ) >"$d/a$k/out" 2>&1 </dev/null &
    _rv_task_pgid=$!
    set +m
    wait "$_rv_task_pgid"
    status=$?
    _rv_task_pgid=""
  fi
  printf '%s %s\n' "$status" "$(date +%s)" >"$d/a$k/exit.tmp" && mv -f -- "$d/a$k/exit.tmp" "$d/a$k/exit"
  _rv_log "task $t (attempt $k) exited with status $status"
  if [ "$status" -eq 0 ] || [ "$RV_RETRY_FAILED" != 1 ] || [ "$k" -ge "$RV_TASK_ATTEMPTS" ]; then
    : >"$d/done"
  fi
}

# A signal to the worker (scancel, preemption, the allocation's end) ends its task with it: the
# attempt keeps no `exit`, so the task's next attempt runs elsewhere, and nothing of this one
# outlives the worker (under proctrack/linuxproc a task's processes did: docs/studies.md).
_rv_task_pgid=""
# shellcheck disable=SC2317  # called by the trap
_rv_worker_signalled() {
  if [ -n "$_rv_task_pgid" ]; then
    kill -TERM -- "-$_rv_task_pgid" 2>/dev/null
    sleep 2
    kill -KILL -- "-$_rv_task_pgid" 2>/dev/null
  fi
  : >"$RV_TASKS_DIR/.ended.$SLURM_JOB_ID" 2>/dev/null
  _rv_log "worker $SLURM_JOB_ID was signalled: its task ended with it"
  exit 143
}
trap _rv_worker_signalled TERM INT
)sh";

// Across clusters: the claim is of an offer rv made on this cluster, never of a task by itself.
constexpr std::string_view k_offers =
    R"sh(# ---- across clusters: tasks are offered (docs/studies.md, "Across clusters") ----
# rv offers a task on one cluster at a time: tasks/<t>/offer holds the attempt to run. This worker
# takes an offer by renaming it (one winner; rv takes an offer back by the same rename), then
# names its attempt as on one cluster. rv decides retries and cancels idle workers on every cluster.
RV_OFFER_WAIT_S={{offer_wait_s}}
_rv_take_offer() {
  local t d k tmp
  for t in $RV_TASK_IDS; do
    d="$RV_TASKS_DIR/$t"
    [ -d "$d/offer" ] || continue
    tmp="$d/.claim.$SLURM_JOB_ID"
    rm -rf -- "$tmp"
    mv -T -- "$d/offer" "$tmp" 2>/dev/null || continue
    k=$(cat -- "$tmp/attempt" 2>/dev/null)
    printf '%s\n' "$SLURM_JOB_ID" >"$tmp/job"
    date +%s >"$tmp/start"
    if [ -n "$k" ] && mv -T -- "$tmp" "$d/a$k" 2>/dev/null; then
      printf '%s %s\n' "$t" "$k"
      return 0
    fi
    _rv_log "warning: task $t: its offer (attempt ${k:-?}) could not be taken"
  done
  return 1
}
# Takes an offer, waiting up to RV_OFFER_WAIT_S for rv to make one (it sees this worker start at
# its next poll); fails when none came, when rv said nothing is left to offer here (.drained: every
# task is done or on a worker), or when the allocation no longer holds a task.
_rv_claim_next() {
  local waited=0
  while :; do
    _rv_take_offer && return 0
    [ ! -e "$RV_TASKS_DIR/.drained" ] || return 1
    [ "$waited" -lt "$RV_OFFER_WAIT_S" ] || return 1
    [ "$_rv_ran" -eq 0 ] || [ $(( RV_JOB_END_TIME - $(date +%s) )) -ge "$RV_TASK_TIME_S" ] || return 1
    sleep 2
    waited=$(( waited + 2 ))
  done
}
# rv, not a worker, cancels the pending workers once nothing is left to offer.
_rv_any_waiting() { return 0; }
)sh";

constexpr std::string_view k_worker_run = R"sh(
# ---- run (study worker) ----
if ! mkdir -p -- "$RV_TASKS_DIR"; then
  _rv_log "error: cannot create $RV_TASKS_DIR"
  exit 1
fi
# Marks for rv's top-up (docs/studies.md): it waits for a worker to start or end, not for its poll.
: >"$RV_TASKS_DIR/.started.$SLURM_JOB_ID"
# The allocation was sized for at least one task (its walltime holds a task's --time): the first
# task is always claimed; a later one only while the allocation's real end leaves it its --time.
_rv_ran=0
while :; do
  _rv_left=$(( RV_JOB_END_TIME - $(date +%s) ))
  if [ "$_rv_ran" -gt 0 ] && [ "$_rv_left" -lt "$RV_TASK_TIME_S" ]; then
    _rv_log "${_rv_left}s left in the allocation, less than a task's ${RV_TASK_TIME_S}s: no more tasks here"
    break
  fi
  _rv_next=$(_rv_claim_next) || break
  _rv_run_task "${_rv_next% *}" "${_rv_next#* }"
  _rv_ran=$(( _rv_ran + 1 ))
done
: >"$RV_TASKS_DIR/.ended.$SLURM_JOB_ID"
_rv_any_waiting || _rv_cancel_pending_workers
_rv_log "worker $SLURM_JOB_ID ran $_rv_ran task(s) of study $RV_REQUEST_ID"
_rv_status=0
)sh";

} // namespace

std::string_view job_alive_function()
{
  return k_job_alive;
}

std::string study_body(const Context& ctx)
{
  const auto& o = ctx.options;
  const auto& st = o.study;
  std::string ids;
  std::string cases;
  for (const auto& t : st.tasks) {
    ids += (ids.empty() ? "" : " ") + std::to_string(t.id);
    const auto launch = inject_launcher_flags(t.command, false);
    cases += fmt::format("  {})\n    RV_COMMAND={}\n", t.id, proc::shell_quote(launch.command));
    for (const auto& e : t.env) {
      cases += fmt::format("    export {}={}\n", e.name, proc::shell_quote(e.value));
    }
    cases += "    ;;\n";
  }
  std::string unset;
  if (!st.variables.empty()) {
    unset = "  unset";
    for (const auto& v : st.variables) {
      unset += " " + v;
    }
    unset += "\n";
  }
  // On one cluster the worker claims tasks itself; across clusters it takes rv's offers instead.
  const std::string text = std::string(k_worker) + std::string(st.offers ? k_offers : k_claim_self) +
                           (st.offers ? "\n" : "") + std::string(k_worker_tail);
  std::string body =
      fill(text, {{"run", container_prefix(ctx, false)},
                  {"job_alive", std::string(k_job_alive)},
                  {"tasks_dir", proc::shell_quote(o.remote_root + "/requests/" + o.request_id + "/tasks")},
                  {"task_time_s", std::to_string(st.task_time_s)},
                  {"attempts", std::to_string(st.attempts)},
                  {"retry_failed", st.retry_failed ? "1" : "0"},
                  {"task_ids", proc::shell_quote(ids)},
                  {"task_count", std::to_string(st.tasks.size())},
                  {"unset", unset},
                  {"cases", cases},
                  {"comment", proc::shell_quote("rv:" + o.request_id)},
                  {"offer_wait_s", std::to_string(st.offer_wait_s)}});
  return body + std::string(k_worker_run) + copy_outputs(ctx) + notify_end(ctx) + "exit 0\n";
}

} // namespace rv::templates::detail
