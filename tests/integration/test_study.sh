#!/usr/bin/env bash
# rv run --array / --sweep against the real cluster (docs/studies.md): every task runs exactly once
# (each task appends its id to a file on the cluster at its end; the file is counted), `rv run -f`
# streams every task's output prefixed and ends with the table; a worker killed mid-task has its
# task run again once (attempt 2); rv killed between submission and the workers' start still ends
# with every task once; `rv ps REQ`, `rv logs REQ/N` and `REQ:N`, `rv stop REQ`.
# testbed-lock: exclusive (submits jobs)
# test-clusters: both (50 s on each; the studies rely on squeue states and scancel, which differ by version)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-study-$$
# The file the tasks append to, on the cluster (the login node and the jobs share $HOME).
RAN=rv-it-study-$$-ran
cleanup_jobs() {
  local ids
  ids=$(squeue -h -u "$TB_SSH_USER" -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  remote "rm -f $RAN-*" 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

TYPE=$IT_IDLE_TYPE
# ran SUFFIX: the sorted task ids the tasks of one case recorded.
ran() { remote "cat $RAN-$1 2>/dev/null" | sort -n | paste -sd' '; }
# study_id: the request id rv printed ("study ID: ..." or the submitted table "request ID (...)").
study_id() { sed -n -e 's/^study \([0-9a-f]\{8\}\): .*/\1/p' -e 's/^request \([0-9a-f]\{8\}\) (.*/\1/p' "$@" | head -n1; }
# ps_counts ID: the study's counts line.
ps_counts() { ssh_rv ps "$1" 2>/dev/null | sed -n 's/^ *tasks: //p'; }
all_done() { [[ $(ps_counts "$1") == "$2 done, 0 running, 0 pending, 0 failed"* ]]; }
workers_gone() { ! squeue -h -u "$TB_SSH_USER" -o '%k' 2>/dev/null | grep -qx "rv:$1"; }

# ---- 1. -f: an array of 6 tasks, at most 3 at once, each once, output prefixed, the table ----
run ssh_rv run -f -g 1 -t "$TYPE" --time 2m --name "$NAME-a" --array 0-5%3 -- \
  "echo start {task} \$RV_TASK_ID/\$RV_TASK_COUNT; sleep 2; echo {task} >>\$HOME/$RAN-a; echo end {task}"
assert_rc 0 "rv run -f --array 0-5%3"
A=$(study_id "$IT_DIR/out" "$IT_DIR/err")
[[ -n $A ]] || it_fail "no study id printed" "$(it_last_run)"
assert_eq "0 1 2 3 4 5" "$(ran a)" "every task ran exactly once"
for t in 0 1 2 3 4 5; do
  assert_contains "$RUN_OUT" "[$t] start $t $t/6" "task $t's output, prefixed [$t], with RV_TASK_ID and RV_TASK_COUNT"
  assert_contains "$RUN_OUT" "[$t] end $t" "task $t's last line"
done
assert_contains "$RUN_ERR" "6 done, 0 running, 0 pending, 0 failed of 6 task(s)" "the final counts"
assert_match "$RUN_ERR" "TASK +STATE +STRATEGY +TIME +EXIT" "the final table"
# Never more than 3 workers (the %3): the record's jobs.
workers=$(jq '[.jobs[] | select(.job_id != "")] | length' "$(record_of "$A")")
((workers <= 3)) || it_fail "%3 submitted $workers workers"
pass "rv run -f --array 0-5%3: 6 tasks once each on $workers worker(s), output prefixed, table, exit 0"

run ssh_rv ps "$A"
assert_contains "$RUN_OUT" "6 done, 0 running, 0 pending, 0 failed" "rv ps REQ: the counts"
assert_match "$RUN_OUT" "\[4\] done +attempt 1" "rv ps REQ lists the tasks"
run ssh_rv logs "$A/4"
assert_rc 0 "rv logs REQ/4"
assert_eq "start 4 4/6"$'\n'"end 4" "$RUN_OUT" "rv logs REQ/4 is task 4's output"
run ssh_rv logs "$A:2"
assert_contains "$RUN_OUT" "end 2" "rv logs REQ:2"
run ssh_rv logs "$A/9"
assert_rc 2 "rv logs REQ/9 of a study without task 9"
assert_contains "$RUN_ERR" "has no task 9" "rv logs names the missing task"
pass "rv ps REQ lists the tasks; rv logs REQ/4 and REQ:2 are the tasks' outputs"

# ---- 2. a sweep: {NAME} shell-quoted, RV_SWEEP_<NAME>; a bad spec is one line ----
run ssh_rv run -f --no-prefix --prefer cost -g 1 -t "$TYPE" --time 2m --name "$NAME-s" --sweep "x=a b,it's" \
  --sweep n=1,2 -- "printf '<%s|%s|%s>\n' {x} \"\$RV_SWEEP_X\" {n}; echo {task} >>\$HOME/$RAN-s"
assert_rc 0 "rv run -f --sweep --prefer cost"
S=$(study_id "$IT_DIR/out" "$IT_DIR/err")
[[ -n $S ]] || it_fail "no study id printed for the sweep" "$(it_last_run)"
assert_eq "cost" "$(jq -r .study.prefer "$(record_of "$S")")" "--prefer cost kept in the study's record (the top-ups use it)"
assert_eq "0 1 2 3" "$(ran s)" "every sweep task once"
for want in "<a b|a b|1>" "<a b|a b|2>" "<it's|it's|1>" "<it's|it's|2>"; do
  assert_contains "$RUN_OUT" "$want" "the sweep's values arrive exactly"
done
assert_not_contains "$RUN_OUT" "[0]" "--no-prefix"
run ssh_rv run --nodes 2 -g 2 --time 2m --array 0-1 -- true
assert_rc 2 "a study whose every strategy is multi-node"
assert_contains "$RUN_ERR" "multi-node; a study's workers run on one node" "the refusal says why each strategy cannot be a worker"
run ssh_rv run --array 3-1 -- true
assert_rc 2 "a bad --array"
assert_contains "$RUN_ERR" "--array 3-1: '3-1' ends before it starts" "the bad part named"
pass "--sweep x=...,n=...: 4 tasks once each, values shell-quoted and in RV_SWEEP_X; a bad spec is one line"

# ---- 3. a worker killed mid-task: its task runs again (attempt 2), each task once ----
# Each task waits for a go file the test makes only once the victim's job is gone: the killed
# attempt can append its id only if something of it outlived its worker, however slow the machine
# (it waited 12 s before, and under CI's load the scancel came after that attempt had appended).
run ssh_rv run -g 1 -t "$TYPE" --time 2m --name "$NAME-k" --array 0-2 -- \
  "for i in \$(seq 240); do [ -e \$HOME/$RAN-go ] && break; sleep 0.5; done; echo {task} >>\$HOME/$RAN-k"
assert_rc 0 "rv run --array 0-2 (no -f)"
K=$(study_id "$IT_DIR/out")
[[ -n $K ]] || it_fail "no study id printed" "$(it_last_run)"
root=$(jq -r .remote_root "$(record_of "$K")")
claimed() { remote "cat $root/requests/$K/tasks/1/a1/job 2>/dev/null" | grep -q .; }
wait_for 120 claimed
victim=$(remote "cat $root/requests/$K/tasks/1/a1/job")
sleep 3 # mid-task: its command runs (it waits for the go file)
scancel "$victim"
victim_gone() { [[ -z $(squeue -h -j "$victim" -t PD,R,CG,S 2>/dev/null) ]]; }
wait_for 60 victim_gone
sleep 2 # anything of the victim that outlived it would now append once the go file exists
remote "touch $RAN-go"
wait_for 240 all_done "$K" 3
attempts=$(remote "cd $root/requests/$K/tasks && for a in */a*; do echo \$a job=\$(cat \$a/job) exit=\$(cat \$a/exit 2>/dev/null); done")
assert_eq "0 1 2" "$(ran k)" "the killed worker's task ran again, and every task once (attempts: $attempts)"
assert_eq "lost" "$(remote "cut -d' ' -f1 $root/requests/$K/tasks/1/a1/exit")" "attempt 1 is recorded lost"
assert_eq "0" "$(remote "cut -d' ' -f1 $root/requests/$K/tasks/1/a2/exit")" "attempt 2 ran it"
wait_for 60 workers_gone "$K"
pass "worker $victim killed mid-task: task 1 ran again as attempt 2; every task once; no worker left"

# ---- 4. rv killed between submission and the workers' start: every task still once ----
occupier=$(it_occupy "$TYPE" "$NAME-occupy")
# rv itself in the background, not ssh_rv: a function in the background is a subshell, and its pid
# is not rv's (until session 42 this step killed that subshell, and rv -f ran on unseen).
"$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" run -f -g 1 -t "$TYPE" --time 2m --name "$NAME-r" --array 0-2 -- \
  "echo {task} >>\$HOME/$RAN-r" </dev/null >"$IT_DIR/r.out" 2>"$IT_DIR/r.err" &
rv_pid=$!
submitted() { [[ -n $(study_id "$IT_DIR/r.err") ]]; }
wait_for 60 submitted
R=$(study_id "$IT_DIR/r.err")
kill -9 "$rv_pid"
wait "$rv_pid" 2>/dev/null || true
assert_eq "" "$(pgrep -f -- "--name $NAME-r --array" || true)" "rv -f itself was killed"
# Nobody tends the study now: rv ps starts a background rv for it, once.
run ssh_rv ps "$R"
assert_contains "$RUN_ERR" "rv: study $R had no rv tending it" "rv ps starts a background rv for the study rv -9 left"
# shellcheck disable=SC2317  # called through wait_for
tended() { ! flock -n "$RV_STATE_DIR/requests/.$R.tending" true; }
wait_for 30 tended
run ssh_rv ps "$R"
assert_not_contains "$RUN_ERR" "had no rv tending it" "a study a background rv tends gets no second one"
scancel "$occupier"
wait_for 240 all_done "$R" 3
assert_eq "0 1 2" "$(ran r)" "every task once after rv was killed"
wait_for 60 workers_gone "$R"
pass "rv killed before the workers started: rv ps started a background rv; every task once, no worker left"

# ---- 5. rv stop REQ stops every worker ----
run ssh_rv run -g 1 -t "$TYPE" --time 2m --name "$NAME-x" --array 0-3%2 -- "sleep 300"
X=$(study_id "$IT_DIR/out")
[[ -n $X ]] || it_fail "no study id printed" "$(it_last_run)"
run ssh_rv stop "$X"
assert_rc 0 "rv stop REQ"
wait_for 60 workers_gone "$X"
pass "rv stop REQ cancels every worker"
