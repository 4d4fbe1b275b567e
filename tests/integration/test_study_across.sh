#!/usr/bin/env bash
# A study across both real clusters (docs/studies.md, "Across clusters"): rvtb (Slurm 22.05) and
# rvtb2 (Slurm 24.11), which share no file system. rv offers each task on one cluster at a time;
# a worker takes an offer by one rename. Each task appends "<cluster> <task>" to a marker file in
# the home of the cluster it ran on; the test counts them on both.
#   1. rv run -f --array 0-5, both clusters free: every task exactly once, tasks on both clusters,
#      the table; rv ps REQ names each task's cluster; rv logs REQ/N reads it there.
#   2. rv run (no -f: the background rv coordinates) --array 0-2; a worker killed mid-task on one
#      cluster: its task runs again once (attempt 2), every task once, no worker left.
#   3. rv stop REQ of a running study: no job and no offer of it left on either cluster.
# testbed-lock: exclusive (submits jobs on both clusters)
# testbed-span: both (it submits on the other cluster too: ctest runs nothing on either beside it)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

it_need_cluster2 # cluster 2 too (TB2_BIN), under its lock: this test submits on both

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-xstudy-$$
MARKS=rv-it-xstudy-$$.marks # in the testbed user's home on each cluster
both() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb --host rvtb2 "$@"; }
on1() { "$@"; }
on2() { PATH=$TB2_BIN:$PATH "$@"; }
on_host() { ssh -F "$TB_SSH_CONFIG" "$1" "$2"; }
theirs() { # rv's jobs of this test still queued or running on a cluster ("on1" or "on2")
  "$1" squeue -h -u rvtest -o '%i %j %T' | awk -v p="$NAME" 'index($2, p) == 1'
}
none_left() { [[ -z $(theirs on1)$(theirs on2) ]]; }
cleanup_xstudy() {
  local c ids h
  for c in on1 on2; do
    ids=$("$c" squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
    # shellcheck disable=SC2086  # one word per job id
    [[ -z $ids ]] || "$c" scancel $ids 2>/dev/null || true
  done
  for h in rvtb rvtb2; do on_host "$h" "rm -f ~/$MARKS ~/$MARKS.go" 2>/dev/null || true; done
}
trap 'rc=$?; cleanup_xstudy; (exit "$rc"); it_cleanup' EXIT
it_wait_diagnose() {
  local c
  for c in on1 on2; do
    echo "$c: the jobs not ended:"
    "$c" squeue -a -h -o '  %i %u %j %T %r %N' 2>&1 | head -n 40
  done
  echo "records:"
  jq -c '{id, state, destination, across: .study.across, jobs: [.jobs[] | {job_id, state}]}' "$RV_STATE_DIR"/requests/*.json 2>&1
  cat "$RV_STATE_DIR"/requests/*.log 2>/dev/null | tail -n 40
}
marks() { # "<cluster> <task>" lines of both clusters
  local h
  for h in rvtb rvtb2; do on_host "$h" "cat ~/$MARKS 2>/dev/null" || true; done
}
study_id() { sed -n 's/^study \([0-9a-f]\{8\}\)[: ].*/\1/p' "$@" | head -n1; }
ps_counts() { both ps "$1" 2>/dev/null | sed -n 's/^ *tasks: //p'; }
all_done() { [[ $(ps_counts "$1") == "$2 done, 0 running, 0 pending, 0 failed"* ]]; }
# The task directory of member request $2 on host $1 ($3: a path under it).
member_of() { jq -r --arg h "$2" '.study.across.members[] | select(.host == $h) | .id' "$(record_of "$1")"; }
root_of() { jq -r .remote_root "$(record_of "$1")"; }

# The command: "<cluster> <case> <task>" in the marker of the cluster it ran on.
# shellcheck disable=SC2016  # expanded in the job, not here
mark_cmd() { printf 'echo "$SLURM_CLUSTER_NAME %s {task}" >>"$HOME/%s"' "$1" "$MARKS"; }

# The pool is one model over both clusters' strategies (study::plan_pool_across): a worker goes
# where it shortens the study for the least SU. In their own units cluster 2's GPUs cost more than
# cluster 1's free ones, so with equal weights no worker would go there; weighted at 0.5 its two
# l40s are the cheapest GPUs of the two clusters, and the pool takes them and cluster 1's v100s.
"$RV" config set su_weights rvtb=1,rvtb2=0.5 >/dev/null || it_fail "rv config set su_weights"

# ---- 1. -f across both clusters, both free: every task once, on both clusters ----
run both run -f --no-sync -g 1 --time 2m --name "$NAME-a" --array 0-5 -- \
  "echo start {task}; sleep 20; $(mark_cmd a); echo end {task}"
assert_rc 0 "rv run -f --array 0-5 --host rvtb --host rvtb2"
A=$(study_id "$IT_DIR/out" "$IT_DIR/err")
[[ -n $A ]] || it_fail "no study id printed" "$(it_last_run)"
assert_eq "0 1 2 3 4 5" "$(marks | awk '$2 == "a" { print $3 }' | sort -n | paste -sd' ')" \
  "every task ran exactly once across both clusters ($(marks | paste -sd,))"
clusters=$(marks | awk '$2 == "a" { print $1 }' | sort -u | wc -l)
((clusters == 2)) || it_fail "the tasks ran on $clusters cluster(s), not both: $(marks | paste -sd,)" "$(it_last_run)"
for t in 0 1 2 3 4 5; do
  assert_contains "$RUN_OUT" "[$t] end $t" "task $t's output, prefixed, streamed from its cluster"
done
assert_contains "$RUN_ERR" "6 done, 0 running, 0 pending, 0 failed of 6 task(s)" "the final counts"
assert_match "$RUN_ERR" "TASK +STATE +CLUSTER STRATEGY +TIME +EXIT" "the final table names the cluster"
pass "rv run -f --array 0-5 across both clusters: each task once, on both clusters ($(marks | awk '{print $1}' | sort | uniq -c | paste -sd' '))"

run both ps "$A"
assert_rc 0 "rv ps REQ"
assert_contains "$RUN_OUT" "6 done, 0 running, 0 pending, 0 failed" "rv ps REQ: the counts"
for t in 0 1 2 3 4 5; do
  assert_match "$RUN_OUT" "\[$t\] done +on rvtb2? " "rv ps REQ names task $t's cluster"
done
assert_match "$RUN_OUT" "\] done +on rvtb " "a task on rvtb"
assert_match "$RUN_OUT" "\] done +on rvtb2 " "a task on rvtb2"
run both logs "$A/3"
assert_rc 0 "rv logs REQ/3"
assert_eq "start 3"$'\n'"end 3" "$RUN_OUT" "rv logs REQ/3 reads task 3's log on its cluster"
wait_for 120 none_left
pass "rv ps REQ shows each task's cluster; rv logs REQ/3 reads it there; no worker left"

# ---- 2. without -f; a worker killed mid-task on one cluster: its task runs again once ----
go_on_both() { on_host rvtb "touch ~/$MARKS.go" && on_host rvtb2 "touch ~/$MARKS.go"; }
run both run --no-sync -g 1 --time 2m --name "$NAME-k" --array 0-2 -- \
  "for i in \$(seq 240); do [ -e \$HOME/$MARKS.go ] && break; sleep 0.5; done; $(mark_cmd k)"
assert_rc 0 "rv run --array 0-2 across both (no -f)"
K=$(study_id "$IT_DIR/out")
[[ -n $K ]] || it_fail "no study id printed" "$(it_last_run)"
# Task 1's first attempt, on whichever cluster took it: its host and job.
victim_host=""
claimed() {
  local h m r
  for h in rvtb rvtb2; do
    m=$(member_of "$K" "$h")
    [[ -n $m ]] || continue
    r=$(root_of "$m")
    if on_host "$h" "cat $r/requests/$m/tasks/1/a1/job 2>/dev/null" | grep -q .; then
      victim_host=$h victim_dir=$r/requests/$m/tasks/1
      return 0
    fi
  done
  return 1
}
wait_for 180 claimed
victim=$(on_host "$victim_host" "cat $victim_dir/a1/job")
sleep 3 # mid-task: it waits for the go file
if [[ $victim_host == rvtb ]]; then on1 scancel "$victim"; else on2 scancel "$victim"; fi
victim_gone() {
  local c=on1
  [[ $victim_host == rvtb ]] || c=on2
  [[ -z $("$c" squeue -h -j "$victim" -t PD,R,CG,S 2>/dev/null) ]]
}
wait_for 60 victim_gone
sleep 2
go_on_both
wait_for 300 all_done "$K" 3
assert_eq "0 1 2" "$(marks | awk '$2 == "k" { print $3 }' | sort -n | paste -sd' ')" \
  "the killed worker's task ran again, and every task once ($(marks | paste -sd,))"
run both ps "$K"
assert_match "$RUN_OUT" "\[1\] done +on rvtb2? +attempt 2 " "task 1 ran as attempt 2"
wait_for 120 none_left
pass "worker $victim killed mid-task on $victim_host: task 1 ran again once (attempt 2); every task once; no worker left"

# ---- 3. rv stop: nothing of the study left on either cluster ----
# `&&`: a task killed mid-sleep must not mark (with `;` the shell could reach the mark between the
# signal to sleep and its own: Slurm signals a job's processes one by one).
run both run --no-sync -g 1 --time 5m --name "$NAME-s" --array 0-3 -- "sleep 240 && $(mark_cmd s)"
assert_rc 0 "rv run --array 0-3 across both (no -f)"
S=$(study_id "$IT_DIR/out")
[[ -n $S ]] || it_fail "no study id printed" "$(it_last_run)"
some_running() { [[ $(ps_counts "$S") == *", "[1-9]" running"* ]]; }
wait_for 180 some_running
run both stop "$S"
assert_rc 0 "rv stop REQ"
wait_for 60 none_left
assert_eq "" "$(marks | awk '$2 == "s"')" "no stopped task finished"
offers_left() { # the offers left in the study's task directories, on both clusters
  local h m r
  for h in rvtb rvtb2; do
    m=$(member_of "$S" "$h")
    [[ -n $m ]] || continue
    r=$(root_of "$m")
    on_host "$h" "ls -d $r/requests/$m/tasks/*/offer 2>/dev/null" || true
  done
}
assert_eq "" "$(offers_left)" "rv stop took back every offer on both clusters"
sleep 20 # the background rv sees the stop: it must submit nothing more
none_left || it_fail "jobs of the stopped study came back: $(theirs on1) $(theirs on2)"
pass "rv stop REQ: no job and no offer of the study left on either cluster"
