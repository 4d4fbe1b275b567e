#!/usr/bin/env bash
# What survives a broken race, on the real cluster:
#  1. rv killed with SIGKILL mid-race: the next `rv ps` finds the winner and cancels every loser
#     (the losers' comments are changed first so the in-job guard cannot find them: only rv ps can);
#  2. slurmctld restarted while rv races: the race still completes, the command runs once.
# Both fill every GPU type's nodes with root's jobs so that rv's strategies pend, then free one
# (IT_FREED_TYPE: one strategy starts). The cluster's shape comes from lib.sh's roles, so the test
# runs on either cluster. Needs root (it restarts slurmctld). ~1-2 minutes.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ $(id -u) == 0 ]] || it_fail "needs root: it restarts slurmctld"
export RV_STATE_DIR=$IT_DIR/state
# rv itself in the background (not a subshell around it), so that $! is rv's pid.
bg_rv() { # stdout-file stderr-file rv-args...
  local out=$1 err=$2
  shift 2
  "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@" </dev/null >"$out" 2>"$err" &
  rv_pid=$!
  bg_pids+=("$rv_pid")
}
NAME=rv-it-recovery-$$
occupiers=()
bg_pids=()
cleanup_jobs() {
  local pid ids
  for pid in "${bg_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  ((${#occupiers[@]} == 0)) || scancel "${occupiers[@]}" 2>/dev/null || true
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  # A failed restart must not leave the testbed without its controller (by its pidfile: both
  # clusters' controllers are called slurmctld; testbed/lib2.sh).
  tb_ctld_alive || { tb_ctld_start && wait_for 30 scontrol ping; } || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

FREE=$IT_FREED_TYPE
FREE_PART=$(it_partition "$FREE")
job_ids_of() { jq -r '.jobs[] | select(.job_id != "") | .job_id' "$(record_of "$1")" | paste -sd,; }
# Waits until the background rv ($1 = its stdout) has submitted and records the request.
# shellcheck disable=SC2317  # called through wait_for
submitted() { local r; r=$(it_request_id "$1"); [[ -n $r && $(jq -r .state "$(record_of "$r")" 2>/dev/null) == submitted ]]; }
pending_of() { squeue -h -t PD -j "$1" -o %i 2>/dev/null | wc -l; }

# Every GPU type but the MIG-like one (rv drops it for a whole-GPU request).
for t in $(it_gpu_types); do
  id=$(it_occupy "$t")
  occupiers+=("$id")
  [[ $t != "$FREE" ]] || free_job=$id
done

# ---- 1. SIGKILL mid-race, then rv ps ----
bg_rv "$IT_DIR/kill.out" "$IT_DIR/kill.err" run -f -g 1 --time 5m --name "$NAME-kill" -- 'echo ran-once'
wait_for 60 submitted "$IT_DIR/kill.out"
rid=$(it_request_id "$IT_DIR/kill.out")
ids=$(job_ids_of "$rid")
n=$(tr , '\n' <<<"$ids" | wc -l)
((n >= 2)) || it_fail "the race needs at least 2 strategies (ids $ids)"
assert_eq "$n" "$(pending_of "$ids")" "all $n strategies pend before rv is killed (ids $ids)"
sleep 2 # at least one poll
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
# Blind the in-job guard: it finds siblings by their comment rv:<request id>.
for id in ${ids//,/ }; do scontrol update JobId="$id" Comment=rv-it-hidden; done

# rv ps while everything still pends: lists the request, cancels nothing.
run ssh_rv ps
assert_rc 0 "rv ps after SIGKILL"
assert_contains "$RUN_OUT" "$rid" "rv ps lists the killed request"
assert_eq "$n" "$(pending_of "$ids")" "rv ps cancels nothing while no strategy has started"

# One partition frees up: its strategy starts (and runs the command); the others still pend.
scancel "$free_job"
winner=$(jq -r --arg p "$FREE_PART" '.jobs[] | select(.partition == $p) | .job_id' "$(record_of "$rid")")
[[ -n $winner ]] || it_fail "no strategy on $FREE_PART, the partition the test frees" "$(cat "$(record_of "$rid")")"
# shellcheck disable=SC2317  # called through wait_for
winner_started() { [[ $(sacct -X -n -P -j "$winner" -o State 2>/dev/null | head -1) =~ ^(RUNNING|COMPLETED)$ ]]; }
wait_for 90 winner_started
assert_eq "$((n - 1))" "$(pending_of "$ids")" "the $((n - 1)) loser(s) still pend: the guard could not see them"

run ssh_rv ps -a
assert_rc 0 "rv ps after the winner started"
assert_contains "$RUN_ERR" "cancelling loser" "rv ps says it reaps the losers"
assert_eq "0" "$(pending_of "$ids")" "no loser of the killed request pends after rv ps"
rec=$(record_of "$rid")
assert_eq "$FREE_PART" "$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .partition' "$rec")" "the record names the $FREE_PART job the winner"
assert_eq "$((n - 1))" "$(jq '[.jobs[] | select(.state == "CANCELLED")] | length' "$rec")" "the record has the $((n - 1)) loser(s) CANCELLED"
pass "SIGKILL mid-race: rv ps found winner $winner on $FREE_PART and cancelled the $((n - 1)) pending loser(s)"

# Give the freed type back to the occupiers for the next case.
scancel "$winner" 2>/dev/null || true
wait_for 60 bash -c "[[ -z \$(squeue -h -j '$ids' 2>/dev/null) ]]"
free_job=$(it_occupy "$FREE")
occupiers+=("$free_job")

# ---- 2. slurmctld restarts mid-race: the race still completes ----
bg_rv "$IT_DIR/ctld.out" "$IT_DIR/ctld.err" run -f -g 1 --time 5m --name "$NAME-ctld" -- 'echo survived-restart'
wait_for 60 submitted "$IT_DIR/ctld.out"
rid=$(it_request_id "$IT_DIR/ctld.out")
ids=$(job_ids_of "$rid")
sleep 2
ctld_pid=$(tb_pid_of "$TB_DIR/slurmctld.pid")
kill -TERM "$ctld_pid"
# shellcheck disable=SC2317  # called through wait_for
ctld_gone() { ! kill -0 "$ctld_pid" 2>/dev/null; }
wait_for 30 ctld_gone
sleep 8 # rv polls a controller that is not there (at least one poll)
kill -0 "$rv_pid" 2>/dev/null || it_fail "rv exited while slurmctld was down" "stderr: $(cat "$IT_DIR/ctld.err")"
tb_ctld_start
wait_for 60 scontrol ping
pass "slurmctld stopped for ~10 s and restarted while rv raced; rv kept racing"
scancel "$free_job"
rc=0
# shellcheck disable=SC2317  # called through wait_for
rv_done() { ! kill -0 "$rv_pid" 2>/dev/null; }
wait_for 120 rv_done
wait "$rv_pid" || rc=$?
assert_eq "0" "$rc" "rv run -f across a slurmctld restart exits 0 (stderr: $(head -c 1500 "$IT_DIR/ctld.err"))"
assert_contains "$(<"$IT_DIR/ctld.out")" "survived-restart" "the command ran"
assert_eq "1" "$(grep -c survived-restart "$IT_DIR/ctld.out")" "the command ran once"
wait_for 30 bash -c "[[ -z \$(squeue -h -t PD -j '$ids' 2>/dev/null) ]]"
assert_eq "$FREE_PART" "$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .partition' "$(record_of "$rid")")" "$FREE_PART won after the restart"
pass "slurmctld restarted mid-race: the race completed, $FREE_PART won, no loser left pending"
