#!/usr/bin/env bash
# rv run -f against the real cluster: the race (the free partition wins, every loser ends
# CANCELLED within one poll interval), a winner that finishes between polls, Ctrl-C mid-race
# (nothing of the request is left in the queue), exit codes (exit 3 -> 3, TIMEOUT -> non-zero and
# named), stdout/stderr kept apart, and commands with nasty quoting arriving exactly as typed.
# Takes ~2 minutes, most of it the TIMEOUT case, which runs in the background on gpu-mig while the
# other cases use the other partitions.
# shellcheck disable=SC2016  # single quotes are the point: these strings must reach the job unexpanded
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
ssh_rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
# Each cluster's shape (docs/testbed.md): the MIG-like type, the type the single cases use, what the
# race fills ("partition gres nodes"), where the free type runs and what fills it last.
if [[ $TB_CLUSTER == rvtest2 ]]; then # Slurm 24.11 (integration24.test_race): l40s is in ada and debug
  MIG_T=h100_3g.40gb FREE_T=l40s WIN_RE='^ada$' STRATS=2 # debug: same node as ada, pruned as dominated
  FULL=("hopper gpu:h100:4 2") LAST="ada gpu:l40s:2"
else
  MIG_T=a100_1g.10gb FREE_T=a6000 WIN_RE='^gpu-a6000$' STRATS=4
  FULL=("gpu-a100 gpu:a100:8 2" "gpu-h200 gpu:h200:4" "gpu-v100 gpu:v100:4") LAST="gpu-a6000 gpu:a6000:8"
fi
# Every job this test makes carries this prefix in its name, so the cleanup finds them all.
NAME=rv-it-race-$$
jobs_to_cancel=()
bg_pids=()
cleanup_jobs() {
  local pid
  for pid in "${bg_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  ((${#jobs_to_cancel[@]} == 0)) || scancel "${jobs_to_cancel[@]}" 2>/dev/null || true
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

occupy() { # partition gres [nodes]: a long job that holds every GPU of every node of the partition
  local id
  # One job for all nodes: holding them one by one can wedge against another test's 2-node job
  # (FIFO: it blocks our second occupier while our first blocks it).
  id=$(sbatch --parsable -p "$1" -N "${3:-1}" --gres="$2" -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
  jobs_to_cancel+=("$id")
  # Other tests may hold these nodes for a while (the cluster is shared): wait for them.
  wait_for_job_state 120 "$id" RUNNING
}

job_ids_of() { jq -r '.jobs[] | select(.job_id != "") | .job_id' "$(record_of "$1")" | paste -sd,; }
# sacct rows "JOBID|STATE|START|END" (epoch seconds) of the given comma-separated job ids.
sacct_rows() { SLURM_TIME_FORMAT=%s sacct -X -P -n -j "$1" -o JobID,State,Start,End 2>/dev/null; }
# Succeeds once accounting has every job of $1 (comma list) in a final state.
sacct_all_final() {
  local rows n
  rows=$(sacct_rows "$1")
  n=$(awk -F, '{ print NF }' <<<"$1")
  [[ $(grep -cE '\|(CANCELLED|COMPLETED|FAILED|TIMEOUT)[^|]*\|' <<<"$rows") == "$n" ]]
}

# ---- background: a job that runs past its limit ends TIMEOUT (Slurm kills it after ~1-1.5 min) ----
(trap - EXIT # the subshell must not run the test's cleanup
  rc=0
  ssh_rv run -f -g 1 --mig -t "$MIG_T" --time 1m --name "$NAME-timeout" -- 'echo started; sleep 300' \
    </dev/null >"$IT_DIR/timeout.out" 2>"$IT_DIR/timeout.err" || rc=$?
  echo "$rc" >"$IT_DIR/timeout.rc") &
bg_pids+=($!)
timeout_t0=$SECONDS

# ---- exit status and the two streams ----
run ssh_rv run -f -g 1 -t "$FREE_T" --time 5m --name "$NAME-exit" -- 'echo to-stdout; echo to-stderr >&2; exit 3'
assert_rc 3 "rv run -f of 'exit 3'"
assert_eq "to-stdout" "$(<"$IT_DIR/out")" "the job's stdout arrives on stdout, alone"
assert_contains "$RUN_ERR" "to-stderr" "the job's stderr arrives on stderr"
assert_contains "$RUN_ERR" "exit code 3" "rv names the exit code"
pass "exit 3 -> rv exits 3; the job's stdout on stdout, its stderr on stderr"

# ---- quoting: several words are an argv and arrive exactly ----
weird='a $HOME "dq" '\''sq'\'' `id` \back $(echo x) ${PATH} ;|&* ~ end'
run ssh_rv run -f -g 1 -t "$FREE_T" --time 5m --name "$NAME-argv" -- printf '<%s>\n' "$weird" 'two  spaces' '' '-n' '%s'
assert_rc 0 "printf with nasty arguments"
expected=$(printf '<%s>\n' "$weird" 'two  spaces' '' '-n' '%s')
assert_eq "$expected" "$(<"$IT_DIR/out")" "argv form: every argument arrives exactly as typed"
pass "argv form: \$, quotes, backticks, empty and option-like arguments arrive exactly"

# One word is a shell command line: the remote shell interprets it just as bash -c would here.
line='printf "%s|" "$((6*7))" '\''$HOME `id` "dq"'\'' `echo bt` "$(echo cs)" a\ b; echo'
run ssh_rv run -f -g 1 -t "$FREE_T" --time 5m --name "$NAME-line" -- "$line"
assert_rc 0 "single-string command line"
assert_eq "$(bash -c "$line")" "$(<"$IT_DIR/out")" "single-string form behaves as the shell line it is"
pass "single-string form: the command line runs as typed (expansions, quotes, backticks)"

# ---- a winner that is over before the first poll: found (scontrol/sacct), rv exits 0 ----
run ssh_rv run -f -g 1 --time 5m --name "$NAME-fast" -- true
assert_rc 0 "rv run -f true (fan-out)"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id printed" "$(it_last_run)"
assert_eq "done" "$(jq -r .state "$(record_of "$rid")")" "the fast request's record is done"
winner=$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .job_id' "$(record_of "$rid")")
[[ -n $winner ]] || it_fail "the fast request has no winner" "$(cat "$(record_of "$rid")")"
ids=$(job_ids_of "$rid")
wait_for 30 sacct_all_final "$ids"
assert_match "$(sacct_rows "$winner")" "^$winner\|COMPLETED\|" "the fast winner completed"
assert_eq "" "$(squeue -h -j "$ids" 2>/dev/null)" "no job of the fast request is left in the queue"
pass "a job that finishes between polls is the winner; rv exits 0 (request $rid, winner $winner)"

# ---- the race: every partition but the free type's full (22.05: a100 on both nodes, h200, v100;
# 24.11: hopper): the free one wins (a6000; ada), losers cancelled ----
for fill in "${FULL[@]}"; do
  # shellcheck disable=SC2086  # partition gres nodes
  occupy $fill
done
run ssh_rv run -f -g 1 --time 5m --name "$NAME-race" -- 'echo "won on $SLURM_JOB_PARTITION"'
assert_rc 0 "the race"
won=$(<"$IT_DIR/out")
assert_match "${won#won on }" "$WIN_RE" "the free partition won and ran the command ($won)"
rid=$(it_request_id "$IT_DIR/out")
rec=$(record_of "$rid")
assert_eq "$STRATS" "$(jq '[.jobs[] | select(.job_id != "")] | length' "$rec")" "$STRATS strategies submitted (one per partition)"
winner=$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .job_id' "$rec")
assert_eq "${won#won on }" "$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .partition' "$rec")" "the record names the same winner"
ids=$(job_ids_of "$rid")
wait_for 30 sacct_all_final "$ids"
rows=$(sacct_rows "$ids")
win_start=$(awk -F'|' -v w="$winner" '$1 == w { print $3 }' <<<"$rows")
[[ $win_start =~ ^[0-9]+$ ]] || it_fail "no start time for the winner $winner" "$rows"
while IFS='|' read -r id state _ end; do
  [[ $id == "$winner" ]] && continue
  [[ $state == CANCELLED* ]] || it_fail "loser $id ended $state, not CANCELLED" "$rows"
  ((end - win_start <= 5)) || it_fail "loser $id was cancelled $((end - win_start)) s after the winner started (limit 5 s)" "$rows"
done <<<"$rows"
assert_eq "" "$(squeue -h -j "$ids" 2>/dev/null)" "no job of the race is left in the queue"
pass "fan-out: ${won#won on } (the free one) won; the $((STRATS - 1)) losers ended CANCELLED within 5 s of its start"

# ---- Ctrl-C mid-race: every strategy pends (every partition full); SIGINT cancels them all ----
# shellcheck disable=SC2086  # partition gres
occupy $LAST
# A background job of a non-interactive shell starts with SIGINT ignored: give rv the default.
env --default-signal=INT "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" run -f -g 1 --time 5m --name "$NAME-int" -- true \
  </dev/null >"$IT_DIR/int.out" 2>"$IT_DIR/int.err" &
rv_pid=$!
bg_pids+=("$rv_pid")
# shellcheck disable=SC2317  # called through wait_for
racing() { grep -q 'interrupt\|won' "$IT_DIR/int.err" && return 1; rid=$(it_request_id "$IT_DIR/int.out"); [[ -n $rid ]] &&
  [[ $(jq -r .state "$(record_of "$rid")" 2>/dev/null) == submitted ]]; }
wait_for 30 racing
rid=$(it_request_id "$IT_DIR/int.out")
ids=$(job_ids_of "$rid")
assert_eq "$STRATS" "$(squeue -h -t PD -j "$ids" | wc -l)" "all $STRATS strategies pend before the interrupt"
sleep 2 # let the race poll at least once
kill -INT "$rv_pid"
int_rc=0
wait "$rv_pid" || int_rc=$?
assert_eq "130" "$int_rc" "rv run -f exits 130 on SIGINT (stderr: $(head -c 500 "$IT_DIR/int.err"))"
assert_eq "" "$(squeue -h -j "$ids" 2>/dev/null)" "no job of the interrupted request is left in squeue (ids $ids)"
assert_eq "" "$(squeue -h -u rvtest -n "$NAME-int" 2>/dev/null)" "none by its name either"
assert_eq "cancelled" "$(jq -r .state "$(record_of "$rid")")" "the interrupted request's record says cancelled"
assert_not_contains "$(<"$IT_DIR/int.err")" "rv: error:" "Ctrl-C is the user's choice: no error label"
pass "SIGINT mid-race: rv exits 130 and no job of the request is left in the queue"

# ---- the TIMEOUT job started first, in the background ----
# shellcheck disable=SC2317  # called through wait_for
timeout_done() { [[ -s $IT_DIR/timeout.rc ]]; }
wait_for $((200 - (SECONDS - timeout_t0))) timeout_done
RUN_RC=$(<"$IT_DIR/timeout.rc") RUN_CMD="rv run -f --time 1m -- sleep 300 (background)" RUN_SECS=$((SECONDS - timeout_t0))
cp "$IT_DIR/timeout.out" "$IT_DIR/out" && cp "$IT_DIR/timeout.err" "$IT_DIR/err"
((RUN_RC != 0)) || it_fail "a job past its time limit: rv exited 0" "$(it_last_run)"
assert_rc 124 "TIMEOUT maps to 124 (docs/exit-codes.md)"
assert_contains "$(<"$IT_DIR/timeout.err")" "TIMEOUT" "stderr names TIMEOUT"
assert_eq "started" "$(<"$IT_DIR/timeout.out")" "the timed-out job's output was streamed"
pass "a job past its --time ends TIMEOUT: rv exits 124 and says TIMEOUT (${RUN_SECS}s)"
