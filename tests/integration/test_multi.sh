#!/usr/bin/env bash
# One request raced across two real clusters (#29, docs/multi-cluster.md): rvtb (Slurm 22.05) and
# rvtb2 (Slurm 24.11). Each case counts how many times the command ran, on both clusters together
# (it appends a line to a marker file in the cluster's home), and what is left in either queue:
#   A. rvtb full, rvtb2 free: the job runs on rvtb2 once; rvtb's jobs end cancelled.
#   B. both free: exactly one run.
#   C. rv stopped (SIGSTOP: the laptop sleeps) right after submitting, then killed, both free: no
#      duplicate run (none unless rv chose one before it stopped), nothing queued or running once
#      the gate's wait has passed, and the next `rv ps` settles both records.
#   D. one login node down: the race runs on the other cluster and says which one it left out.
#   E. rv run without -f: the background rv chooses; exactly one run.
#   F. a faulty node on the winning cluster: the re-fan-out races both clusters again; one run.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# testbed-span: both (it submits on the other cluster too: ctest runs nothing on either beside it)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

it_need_cluster2 # cluster 2 too (TB2_BIN), under its lock: this test submits on both

export RV_STATE_DIR=$IT_DIR/state
export RV_RACE_GATE_WAIT=15s # case C waits this long for the gates to give up
NAME=rv-it-multi-$$
MARKS=rv-it-multi-$$.marks # in the testbed user's home on each cluster
both() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb2 "$@"; }
on1() { "$@"; }
on2() { PATH=$TB2_BIN:$PATH "$@"; }
it_wait_diagnose() { # both queues, with why each job waits, and the nodes
  local c
  for c in on1 on2; do
    echo "$c: the jobs not ended (squeue -a) and the nodes when the wait ended:"
    "$c" squeue -a -h -t pending,running,suspended,completing,configuring -o '  %i %u %j %T %r %N' 2>&1 | head -n 40
    "$c" sinfo -N -h -o '  %N %T %E' 2>&1 | sort -u | head -n 20
  done
}
# Another test's jobs still ending on cluster 2 (a study's last workers, a job completing) hold the
# nodes the occupiers need: wait for them first, and name them if they stay.
others_gone2() { ! on2 squeue -a -h -t pending,running,suspended,completing,configuring -o %j | grep -qv "^$NAME"; }
marks() { # the lines of the marker file on both clusters
  local h
  for h in rvtb rvtb2; do ssh -F "$TB_SSH_CONFIG" "$h" "cat ~/$MARKS 2>/dev/null" || true; done
}
mark_count() { marks | grep -c . || true; }
# For wait_for (which runs its command again each poll): nothing of ours on either cluster; N runs.
none_left() { [[ -z $(theirs on1)$(theirs on2) ]]; }
none_left_on1() { [[ -z $(theirs on1) ]]; }
runs_are() { [[ $(mark_count) == "$1" ]]; }
ours() { # our jobs still queued or running on a cluster ("on1" or "on2"): rv's (rvtest) and occupiers (root)
  "$1" squeue -h -u rvtest,root -o '%i %j %T' | awk -v p="$NAME" 'index($2, p) == 1'
}
theirs() { # rv's jobs of this test still queued or running on a cluster
  "$1" squeue -h -u rvtest -o '%i %j %T' | awk -v p="$NAME" 'index($2, p) == 1'
}
occupied=()
cleanup_multi() {
  local ids
  for c in on1 on2; do
    ids=$("$c" squeue -h -u rvtest,root -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
    # shellcheck disable=SC2086  # one word per job id
    [[ -z $ids ]] || "$c" scancel $ids 2>/dev/null || true
  done
  ((${#occupied[@]} == 0)) || scancel "${occupied[@]}" 2>/dev/null || true
  for h in rvtb rvtb2; do ssh -F "$TB_SSH_CONFIG" "$h" "rm -f ~/$MARKS" 2>/dev/null || true; done
}
trap 'rc=$?; cleanup_multi; (exit "$rc"); it_cleanup' EXIT
# The command: one line per run, naming the cluster, in the marker file of the cluster it ran on.
CMD="echo \"\$SLURM_CLUSTER_NAME \$SLURM_JOB_ID\" >>\"\$HOME/$MARKS\"; echo ran on \$SLURM_CLUSTER_NAME"
state_of() { jq -r .state "$(record_of "$1")"; }
# The race group of the records (one race at a time in this test).
newest_race() { jq -r '.race.group // empty' "$RV_STATE_DIR"/requests/*.json | head -1; }
all_submitted() { # every record of the state dir is past `submitting` and names its jobs
  local f n=0
  for f in "$RV_STATE_DIR"/requests/*.json; do
    [[ -e $f ]] || return 1
    [[ $(jq -r '.state' "$f") != submitting && $(jq -r '[.jobs[] | select(.job_id != "")] | length' "$f") -gt 0 ]] || return 1
    n=$((n + 1))
  done
  ((n >= 2))
}

# --- D: a login node that does not answer is left out, named, and the race goes on ------------
run both --host 127.0.0.1:9 run --dry-run -g 1 --time 10m -- true
# Three hosts: the bogus one is the third --host; it must be named and left out.
assert_rc 0 "a dry run with one host down still plans on the others"
assert_contains "$RUN_OUT" "127.0.0.1:9: left out" "the plan names the cluster it left out"
assert_contains "$RUN_OUT" "rvtb2" "the plan shows the second cluster"
assert_match "$RUN_OUT" "rvtb +s1 " "the plan has a cluster column"
pass "D: planning goes on without an unreachable login node, and names it"
run "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb-wan --host rvtb2 run --dry-run -g 1 --time 10m -- true
assert_rc 0 "two logins of one cluster plan as one"
assert_contains "$RUN_OUT" "rvtb-wan: left out: it reaches cluster rvtest, as rvtb does" "the twin is named and left out"
assert_contains "$RUN_ERR" "cluster rvtb-wan is left out" "and warned about"
assert_not_contains "$RUN_OUT" "  rvtb-wan " "no strategy of the twin is raced"
pass "D: two hosts that reach one cluster: the later one is left out, named (a cluster is not raced against itself)"
run "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host 127.0.0.1:9 run -f --no-sync -g 1 --time 10m --name "$NAME-d" -- "$CMD"
assert_rc 0 "the race on the reachable cluster"
assert_contains "$RUN_ERR" "cluster 127.0.0.1:9 is left out" "rv says which cluster it left out"
assert_contains "$RUN_OUT" "ran on rvtest" "the command ran on the reachable cluster"
assert_eq 1 "$(mark_count)" "one run"
pass "D: a login node down: the request runs on the other cluster and says so"
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- A: rvtb full, rvtb2 free -------------------------------------------------------------------
for spec in "gpu-a100 gpu:a100:8 2" "gpu-h200 gpu:h200:4 1" "gpu-v100 gpu:v100:4 1" "gpu-a6000 gpu:a6000:8 1"; do
  read -r part gres nodes <<<"$spec"
  occupied+=("$(sbatch --parsable -p "$part" -N "$nodes" --gres="$gres" -t 30 -J "$NAME-occupy" -o /dev/null --wrap 'sleep 1800')")
done
for id in "${occupied[@]}"; do wait_for_job_state 120 "$id" RUNNING; done
printf 'import os\nprint("hello from", os.environ["SLURM_CLUSTER_NAME"])\nopen(os.path.expanduser("~/%s"), "a").write(os.environ["SLURM_CLUSTER_NAME"] + "\\n")\n' "$MARKS" >hello.py
run both run -f -g 1 --time 10m --name "$NAME-a" -- python3 hello.py
assert_rc 0 "rv run -f across both clusters with rvtb full"
assert_contains "$RUN_OUT" "hello from rvtest2" "the job ran on the free cluster"
assert_eq "rvtest2" "$(marks)" "it ran once, on rvtb2"
assert_contains "$RUN_ERR" "a job on rvtb2 (cluster rvtest2) started first" "rv says which cluster it chose"
wait_for 30 none_left_on1
assert_eq "" "$(theirs on2)" "nothing of the request left on rvtb2"
loser=$(jq -r 'select(.destination == "rvtb") | .id' "$RV_STATE_DIR"/requests/*.json)
assert_eq cancelled "$(state_of "$loser")" "rvtb's member request ended cancelled"
pass "A: one cluster full, the other free: the job runs once on the free one; the full one's jobs are cancelled"
scancel "${occupied[@]}"
occupied=()
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- B: both free: exactly one run ----------------------------------------------------------------
run both run -f --no-sync -g 1 --time 10m --name "$NAME-b" -- "$CMD"
assert_rc 0 "rv run -f across two free clusters"
assert_eq 1 "$(mark_count)" "both clusters free: the command ran exactly once"
wait_for 30 none_left
pass "B: both free: exactly one run, nothing left on either cluster"
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- C: rv killed right after submitting ------------------------------------------------------------
"$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb2 run -f --no-sync -g 1 --time 10m --name "$NAME-c" -- "$CMD" >"$IT_DIR/c.out" 2>"$IT_DIR/c.err" &
rv_pid=$! # rv itself (a function in the background would be a subshell: its pid is not rv's)
wait_for 60 all_submitted
# The laptop sleeps (SIGSTOP) the moment both clusters have the jobs, and rv is killed later. rv
# may have chosen a job in the moment before: then that one runs, once. Otherwise the jobs start,
# claim their cluster, wait at the gate for a choice that never comes, and end by themselves.
kill -STOP "$rv_pid"
chosen_at_kill=$(jq -r '.race.chosen' "$RV_STATE_DIR"/requests/*.json | sort -u | grep . || true)
wait_for $((15 + 60)) none_left
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
if [[ -z $chosen_at_kill ]]; then
  assert_eq 0 "$(mark_count)" "no rv chose a job: the command never ran"
else
  assert_eq 1 "$(mark_count)" "rv chose $chosen_at_kill before it died: that job ran, once"
fi
group=$(newest_race)
run "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb ps -a
assert_rc 0 "rv ps after the killed race"
# The losers are settled by this rv ps; the chosen job's end may wait for accounting to know it.
all_final() {
  "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb ps -a >/dev/null 2>&1 || return 1
  ! jq -r .state "$RV_STATE_DIR"/requests/*.json | grep -qvE '^(done|failed|cancelled)$'
}
wait_for 60 all_final
for f in "$RV_STATE_DIR"/requests/*.json; do
  id=$(jq -r .id "$f")
  if [[ $id == "$chosen_at_kill" ]]; then
    assert_eq "done" "$(jq -r .state "$f")" "rv ps settled the chosen member $id of race $group: it ran"
  else
    assert_match "$(jq -r .state "$f")" '^(failed|cancelled)$' "rv ps settled member $id of race $group: it never ran"
  fi
done
pass "C: rv stopped and killed after submitting (chosen: ${chosen_at_kill:-none}): no duplicate run, nothing queued or running after the gate's wait, rv ps settles it"
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- C2: both clusters full; rv sleeps before any job starts; then the GPUs free up ----------------
# Nothing can start while every GPU is held, so rv cannot have chosen when it stops: the jobs then
# start, claim their cluster, wait at the gate, and end with exit 95 without running anything.
occupy_all() {
  local spec part gres nodes
  for spec in "gpu-a100 gpu:a100:8 2" "gpu-h200 gpu:h200:4 1" "gpu-v100 gpu:v100:4 1" "gpu-a6000 gpu:a6000:8 1"; do
    read -r part gres nodes <<<"$spec"
    occupied+=("$(sbatch --parsable -p "$part" -N "$nodes" --gres="$gres" -t 30 -J "$NAME-occupy" -o /dev/null --wrap 'sleep 1800')")
  done
  wait_for 90 others_gone2
  for spec in "hopper gpu:h100:4 2" "ada gpu:l40s:2 1"; do
    read -r part gres nodes <<<"$spec"
    occupied2+=("$(on2 sbatch --parsable -p "$part" -N "$nodes" --gres="$gres" -t 30 -J "$NAME-occupy" -o /dev/null --wrap 'sleep 1800')")
  done
  for id in "${occupied[@]}"; do wait_for_job_state 120 "$id" RUNNING; done
  occupiers2_up() { [[ $(on2 squeue -h -j "$(printf '%s,' "${occupied2[@]}")" -t running -o %i | wc -l) == "${#occupied2[@]}" ]]; }
  wait_for 120 occupiers2_up
}
occupied2=()
occupy_all
"$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb2 run -f --no-sync -g 1 --time 10m --name "$NAME-c2" -- "$CMD" >"$IT_DIR/c2.out" 2>"$IT_DIR/c2.err" &
rv_pid=$!
wait_for 60 all_submitted
kill -STOP "$rv_pid"
assert_eq "" "$(jq -r '.race.chosen' "$RV_STATE_DIR"/requests/*.json | grep . || true)" "no choice while every GPU is held"
scancel "${occupied[@]}" # the GPUs free up while rv sleeps
on2 scancel "${occupied2[@]}"
occupied=()
occupied2=()
wait_for $((15 + 90)) none_left
assert_eq 0 "$(mark_count)" "the gated jobs started and ended unchosen: the command never ran"
gated=$(jq -r 'select(.destination == "rvtb") | .jobs[] | select(.job_id != "") | .job_id' "$RV_STATE_DIR"/requests/*.json | paste -sd,)
sacct_says() { [[ $(sacct -X -n -P -j "$gated" -o ExitCode,State 2>/dev/null) == *"95:0|FAILED"* ]]; }
wait_for 30 sacct_says # rvtb's claimer ended with exit 95, as docs/exit-codes.md says
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
wait_for 60 all_final
# The race id names no member when none was chosen: the members are listed (docs/requests.md).
c2_group=$(newest_race)
run "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb logs "$c2_group"
assert_rc 2 "rv logs of a race that chose no member"
assert_contains "$RUN_ERR" "race $c2_group ended without a winner: its members are" "the race id lists its members"
pass "C2: rv asleep when the GPUs freed up: each claimer waited at its gate, ended with exit 95, nothing ran, rv ps settles it"
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- E: rv run without -f: the background rv chooses ------------------------------------------------
run both run --no-sync -g 1 --time 10m --name "$NAME-e" -- "$CMD"
assert_rc 0 "rv run across clusters without -f"
assert_contains "$RUN_OUT" "the first cluster whose job starts runs it" "it says how the race is settled"
wait_for 90 runs_are 1
sleep 5
assert_eq 1 "$(mark_count)" "the background rv chose one job: exactly one run"
wait_for 60 none_left
chosen=$(jq -r '.race.chosen' "$RV_STATE_DIR"/requests/*.json | head -1)
[[ -n $chosen ]] || it_fail "the background rv recorded no choice"
run "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb logs "$chosen"
assert_rc 0 "rv logs of the chosen member, from either host"
assert_contains "$RUN_OUT" "ran on" "the log of the run, fetched from its own cluster"
# The race id is accepted wherever a request id is (UX review 3, N9): it names the member chosen.
e_group=$(newest_race)
for h in rvtb rvtb2; do
  run "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$h" logs "$e_group"
  assert_rc 0 "rv logs RACEID ($e_group) from $h"
  assert_contains "$RUN_OUT" "ran on" "rv logs RACEID is the chosen member's log, from $h"
  run "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$h" why "$e_group"
  assert_rc 0 "rv why RACEID from $h"
  assert_contains "$RUN_OUT" "$chosen" "rv why RACEID explains the chosen member $chosen"
done
pass "E: without -f, the background rv settles the race: one run; rv logs goes to the chosen cluster"
cleanup_multi
rm -rf "$RV_STATE_DIR"

# --- F: a faulty node on the winning cluster: the re-fan-out races both clusters again --------------
# rvtb2 is full, so rvtb wins the first round; there the best-ranked strategy (v100-1) wins its
# cluster's tie and fails its preflight (the stand-in nvidia-smi finds no devices). The next round
# races both clusters again (rvtb without v100-1): the request may move; it runs once.
fault=$TB_DIR/gpu/v100-1/fault
trap 'rc=$?; rm -f "$fault"; cleanup_multi; (exit "$rc"); it_cleanup' EXIT
wait_for 90 others_gone2
for spec in "hopper gpu:h100:4 2" "ada gpu:l40s:2 1"; do
  read -r part gres nodes <<<"$spec"
  on2 sbatch --parsable -p "$part" -N "$nodes" --gres="$gres" -t 30 -J "$NAME-occupy" -o /dev/null --wrap 'sleep 1800' >/dev/null
done
occupiers2_running() { [[ -n $(ours on2) ]] && ! ours on2 | grep -qv RUNNING; } # only occupiers yet
wait_for 120 occupiers2_running
echo nodevices >"$fault"
free_rvtb2_after_round1() { # once v100-1 has failed, rvtb2's GPUs free up for the next round
  wait_for 120 test -s "$IT_DIR/f.err"
  until grep -q 'failed the preflight' "$IT_DIR/f.err"; do sleep 0.5; done
  local ids
  ids=$(on2 squeue -h -u rvtest -o '%i %j' | awk -v p="$NAME-occupy" '$2 == p { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || on2 scancel $ids
}
: >"$IT_DIR/f.err"
free_rvtb2_after_round1 &
freer=$!
"$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb2 run -f --no-sync -g 1 --time 10m --name "$NAME-f" -- "$CMD" \
  >"$IT_DIR/f.out" 2>"$IT_DIR/f.err" || it_fail "the request across clusters after a faulty node" "$(cat "$IT_DIR/f.err")"
wait "$freer" || true
rm -f "$fault"
f_err=$(<"$IT_DIR/f.err")
assert_contains "$f_err" "node v100-1 failed the preflight" "rv names the faulty node"
assert_contains "$f_err" "race" "the next round is a race across the clusters again"
assert_eq 1 "$(mark_count)" "the command ran once, after the re-fan-out"
rounds=$(jq -r '.race.group' "$RV_STATE_DIR"/requests/*.json | sort -u | wc -l)
assert_eq 2 "$rounds" "two race groups: the failed round and the next"
# Round 2's members carry the history; round 1's failed member does too, but ended failed.
hosts_of_round2=$(jq -r 'select(.state != "failed" and (.refanout.history // [] | length) > 0 and .refanout.history[0].node == "v100-1") | .destination' "$RV_STATE_DIR"/requests/*.json | sort -u | paste -sd,)
assert_eq "rvtb,rvtb2" "$hosts_of_round2" "the second round raced both clusters, carrying the history"
pass "F: a faulty node on the winning cluster: the re-fan-out races both clusters again; one run ($(marks))"
