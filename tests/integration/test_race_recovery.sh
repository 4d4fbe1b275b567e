#!/usr/bin/env bash
# What happens when things die mid-race: rv killed with SIGKILL (then `rv ps` and the in-job
# guard finish the job: one sibling runs the command, no loser stays pending), and slurmctld
# restarted during the race (the race still completes).
# shellcheck disable=SC2016  # single-quoted job commands expand in the job
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
ssh_rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb "$@"; }
NAME=rv-it-recovery-$$
occupiers=()
rv_pid=
cleanup_all() {
  [[ -z $rv_pid ]] || kill -9 "$rv_pid" 2>/dev/null || true
  ((${#occupiers[@]} == 0)) || scancel "${occupiers[@]}" 2>/dev/null || true
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  ssh_rv exec rm -f ".$NAME.ran" >/dev/null 2>&1 || true
}
trap 'cleanup_all; it_cleanup' EXIT

declare -A occupier_of
occupy_all() { # every GPU of every non-MIG partition
  local spec id
  for spec in gpu-a100:gpu:a100:8 gpu-a100:gpu:a100:8 gpu-a6000:gpu:a6000:8 gpu-v100:gpu:v100:4 gpu-h200:gpu:h200:4; do
    id=$(sbatch --parsable -p "${spec%%:*}" --gres="${spec#*:}" -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
    occupiers+=("$id")
    occupier_of[${spec%%:*}]=$id
    wait_for_job_state 120 "$id" RUNNING
  done
}
record() { ls "$RV_STATE_DIR"/requests/*.json 2>/dev/null | head -1; }
has_job_ids() { local f; f=$(record) && [[ -n $f ]] && [[ $(jq '[.jobs[] | select(.job_id != "")] | length' "$f") -gt 0 ]]; }
pending_siblings() { # job ids of the request still PENDING in squeue
  local ids
  ids=$(jq -r '[.jobs[] | select(.job_id != "") | .job_id] | join(",")' "$(record)")
  squeue -h -t PENDING -j "$ids" -o %i 2>/dev/null || true
}

# ---- SIGKILL mid-race ----
occupy_all
ssh_rv run -f -g 1 --time 5m --name "$NAME" -- "echo \$SLURM_JOB_ID >> ~/.$NAME.ran; echo ran" \
  </dev/null >"$IT_DIR/kill.out" 2>"$IT_DIR/kill.err" &
rv_pid=$!
wait_for 60 has_job_ids
sleep 2 # let it poll at least once
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
rv_pid=
[[ -n $(pending_siblings) ]] || it_fail "the siblings should still be pending when rv dies"
# One partition frees up: its sibling starts; the guard and `rv ps` take care of the rest.
scancel "${occupier_of[gpu-v100]}"
ps_until_clean() {
  "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb ps >/dev/null 2>&1 || true
  [[ -z $(pending_siblings) ]]
}
wait_for 90 ps_until_clean
run ssh_rv --json ps -a
assert_json '.[0].winner != ""' 'true' "rv ps names the winner"
wait_for 60 ssh_rv exec test -s ".$NAME.ran"
sleep 3
run ssh_rv exec cat ".$NAME.ran"
assert_eq 1 "$(grep -c . <<<"$RUN_OUT")" "the command ran exactly once"
pass "SIGKILL mid-race: rv ps and the in-job guard leave no pending loser; the command ran once"

# ---- slurmctld restarted mid-race ----
scancel "${occupiers[@]}" 2>/dev/null || true
occupiers=()
wait_for 60 bash -c '[[ -z $(squeue -h -u root -n rv-it-occupy -o %i) ]]'
rm -rf "$RV_STATE_DIR"
occupy_all
ssh_rv run -f -g 1 --time 5m --name "$NAME-ctld" -- 'echo ran on $SLURMD_NODENAME' \
  </dev/null >"$IT_DIR/ctld.out" 2>"$IT_DIR/ctld.err" &
rv_pid=$!
wait_for 60 has_job_ids
pid=$(<"$TB_DIR/slurmctld.pid")
kill "$pid"
wait_for 30 bash -c "! kill -0 $pid 2>/dev/null || [[ \$(ps -o stat= -p $pid) == Z* ]]"
sleep 3 # rv polls against a dead controller meanwhile
slurmctld
wait_for 60 sinfo -h
scancel "${occupier_of[gpu-a6000]}"
rc=0
wait "$rv_pid" || rc=$?
rv_pid=
assert_eq 0 "$rc" "the race completes after a slurmctld restart (stderr: $(tail -3 "$IT_DIR/ctld.err"))"
assert_contains "$(<"$IT_DIR/ctld.out")" "ran on a6000-1" "the freed partition won"
pass "slurmctld restarted mid-race: the race still completes"
