#!/usr/bin/env bash
# What survives a broken race, on the real cluster:
#  1. rv killed with SIGKILL mid-race: the next `rv ps` finds the winner and cancels every loser
#     (the losers' comments are changed first so the in-job guard cannot find them: only rv ps can);
#  2. slurmctld restarted while rv races: the race still completes, the command runs once.
# Both fill every GPU partition with root's jobs so that rv's strategies pend, then free one.
# Needs root (it restarts slurmctld). ~1-2 minutes.
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
  # A failed restart must not leave the testbed without its controller.
  tb_ctld_alive || { slurmctld && wait_for 30 scontrol ping; } || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

tb_ctld_alive() { pgrep -x slurmctld >/dev/null; }
occupy() { # partition gres nodes -> prints the job id once it runs
  local id
  id=$(sbatch --parsable -p "$1" -N "$3" --gres="$2" -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
  occupiers+=("$id")
  wait_for_job_state 120 "$id" RUNNING
  printf '%s\n' "$id"
}
request_id_of() { sed -n '1s/^request \([0-9a-f]*\) .*/\1/p' "$1"; }
record_of() { printf '%s/requests/%s.json' "$RV_STATE_DIR" "$1"; }
job_ids_of() { jq -r '.jobs[] | select(.job_id != "") | .job_id' "$(record_of "$1")" | paste -sd,; }
# Waits until the background rv ($1 = its stdout) has submitted and records the request.
# shellcheck disable=SC2317  # called through wait_for
submitted() { local r; r=$(request_id_of "$1"); [[ -n $r && $(jq -r .state "$(record_of "$r")" 2>/dev/null) == submitted ]]; }
pending_of() { squeue -h -t PD -j "$1" -o %i 2>/dev/null | wc -l; }

occupy gpu-a100 gpu:a100:8 2 >/dev/null
occupy gpu-h200 gpu:h200:4 1 >/dev/null
occupy gpu-v100 gpu:v100:4 1 >/dev/null
a6000=$(occupy gpu-a6000 gpu:a6000:8 1)

# ---- 1. SIGKILL mid-race, then rv ps ----
bg_rv "$IT_DIR/kill.out" "$IT_DIR/kill.err" run -f -g 1 --time 5m --name "$NAME-kill" -- 'echo ran-once'
wait_for 60 submitted "$IT_DIR/kill.out"
rid=$(request_id_of "$IT_DIR/kill.out")
ids=$(job_ids_of "$rid")
assert_eq "4" "$(pending_of "$ids")" "all 4 strategies pend before rv is killed (ids $ids)"
sleep 2 # at least one poll
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
# Blind the in-job guard: it finds siblings by their comment rv:<request id>.
for id in ${ids//,/ }; do scontrol update JobId="$id" Comment=rv-it-hidden; done

# rv ps while everything still pends: lists the request, cancels nothing.
run ssh_rv ps
assert_rc 0 "rv ps after SIGKILL"
assert_contains "$RUN_OUT" "$rid" "rv ps lists the killed request"
assert_eq "4" "$(pending_of "$ids")" "rv ps cancels nothing while no strategy has started"

# One partition frees up: its strategy starts (and runs the command); the others still pend.
scancel "$a6000"
winner=$(jq -r '.jobs[] | select(.partition == "gpu-a6000") | .job_id' "$(record_of "$rid")")
# shellcheck disable=SC2317  # called through wait_for
winner_started() { [[ $(sacct -X -n -P -j "$winner" -o State 2>/dev/null | head -1) =~ ^(RUNNING|COMPLETED)$ ]]; }
wait_for 90 winner_started
assert_eq "3" "$(pending_of "$ids")" "the 3 losers still pend: the guard could not see them"

run ssh_rv ps -a
assert_rc 0 "rv ps after the winner started"
assert_contains "$RUN_ERR" "cancelling loser" "rv ps says it reaps the losers"
assert_eq "0" "$(pending_of "$ids")" "no loser of the killed request pends after rv ps"
rec=$(record_of "$rid")
assert_eq "gpu-a6000" "$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .partition' "$rec")" "the record names the a6000 job the winner"
assert_eq "3" "$(jq '[.jobs[] | select(.state == "CANCELLED")] | length' "$rec")" "the record has the 3 losers CANCELLED"
pass "SIGKILL mid-race: rv ps found winner $winner and cancelled the 3 pending losers"

# Give a6000 back to the occupiers for the next case.
scancel "$winner" 2>/dev/null || true
wait_for 60 bash -c "[[ -z \$(squeue -h -j '$ids' 2>/dev/null) ]]"
a6000=$(occupy gpu-a6000 gpu:a6000:8 1)

# ---- 2. slurmctld restarts mid-race: the race still completes ----
bg_rv "$IT_DIR/ctld.out" "$IT_DIR/ctld.err" run -f -g 1 --time 5m --name "$NAME-ctld" -- 'echo survived-restart'
wait_for 60 submitted "$IT_DIR/ctld.out"
rid=$(request_id_of "$IT_DIR/ctld.out")
ids=$(job_ids_of "$rid")
sleep 2
ctld_pid=$(<"$TB_DIR/slurmctld.pid")
kill -TERM "$ctld_pid"
# shellcheck disable=SC2317  # called through wait_for
ctld_gone() { ! kill -0 "$ctld_pid" 2>/dev/null; }
wait_for 30 ctld_gone
sleep 8 # rv polls a controller that is not there (at least one poll)
kill -0 "$rv_pid" 2>/dev/null || it_fail "rv exited while slurmctld was down" "stderr: $(cat "$IT_DIR/ctld.err")"
slurmctld
wait_for 60 scontrol ping
pass "slurmctld stopped for ~10 s and restarted while rv raced; rv kept racing"
scancel "$a6000"
rc=0
# shellcheck disable=SC2317  # called through wait_for
rv_done() { ! kill -0 "$rv_pid" 2>/dev/null; }
wait_for 120 rv_done
wait "$rv_pid" || rc=$?
assert_eq "0" "$rc" "rv run -f across a slurmctld restart exits 0 (stderr: $(head -c 1500 "$IT_DIR/ctld.err"))"
assert_contains "$(<"$IT_DIR/ctld.out")" "survived-restart" "the command ran"
assert_eq "1" "$(grep -c survived-restart "$IT_DIR/ctld.out")" "the command ran once"
wait_for 30 bash -c "[[ -z \$(squeue -h -t PD -j '$ids' 2>/dev/null) ]]"
assert_eq "gpu-a6000" "$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .partition' "$(record_of "$rid")")" "a6000 won after the restart"
pass "slurmctld restarted mid-race: the race completed, a6000 won, no loser left pending"
