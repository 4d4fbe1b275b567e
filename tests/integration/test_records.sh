#!/usr/bin/env bash
# Honest records on the real cluster, and checks before anything reaches the queue (#13): rv stop cancels live jobs once and then says the
# request already ended; a finished request keeps its own end state (a FAILED winner is "failed",
# never "done", and rv stop does not rewrite it); rv up records what the user asked for and the
# release of its allocation. ~30 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-records-$$
cleanup_jobs() {
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

# 1. rv stop on live jobs cancels them; a second rv stop changes nothing and says so.
run ssh_rv --json run -g 1 --time 10m --name "$NAME-live" -- sleep 300
assert_rc 0 "rv run (no -f) submits"
id=$(jq -r .id "$IT_DIR/out")
run ssh_rv stop "$id"
assert_rc 0 "rv stop"
assert_match "$RUN_OUT" "^stopped request $id: cancelled [0-9]" "rv stop names the jobs it cancelled"
wait_for 30 bash -c "[[ -z \$(squeue -h -n '$NAME-live' -o %i) ]]" || it_fail "rv stop left jobs in squeue" "$(squeue)"
run ssh_rv stop "$id"
assert_rc 0 "rv stop again"
assert_contains "$RUN_OUT" "request $id already ended (cancelled); nothing to do" "a second stop cancels nothing"
run ssh_rv --json ps -a
assert_json "[.[] | select(.id == \"$id\") | .state][0]" '"cancelled"' "the stopped request is cancelled"
pass "rv stop cancels once, then says the request already ended"

# 2. A winner that FAILED is a failed request; rv stop does not rewrite it.
run ssh_rv run -f -g 1 --time 5m --name "$NAME-fail" -- sh -c 'sleep 3; exit 3'
assert_rc 3 "rv run -f returns the job's exit code"
run ssh_rv --json ps -a
fid=$(jq -r "[.[] | select(.name == \"$NAME-fail\") | .id][0]" "$IT_DIR/out")
assert_json "[.[] | select(.id == \"$fid\") | .state][0]" '"failed"' "a FAILED winner makes a failed request"
run ssh_rv stop "$fid"
assert_contains "$RUN_OUT" "request $fid already ended (FAILED); nothing to do" "stop on an ended request"
run ssh_rv --json ps -a
assert_json "[.[] | select(.id == \"$fid\") | .state][0]" '"failed"' "rv stop kept the failed state"
pass "a FAILED winner stays failed, through rv stop"

# 3. rv up --run: the record shows the user's command, and the released allocation is not active.
run ssh_rv up -g 1 --time 5m --name "$NAME-up" --run 'echo up-ran'
assert_rc 0 "rv up --run"
assert_contains "$RUN_OUT" "up-ran" "the command ran on the node"
run ssh_rv --json ps -a
assert_json "[.[] | select(.name == \"$NAME-up\") | .command][0]" '"echo up-ran"' "rv up records what the user asked for"
assert_json "[.[] | select(.name == \"$NAME-up\") | .state][0]" '"done"' "rv up is done once released"
run ssh_rv --json ps
assert_json "[.[] | select(.name == \"$NAME-up\")] | length" '0' "a released rv up is not listed as active"
pass "rv up records the command and the release"

# 4. Checks before the queue: a missing script, and rv up with no terminal for its shell.
pushd "$RV_SOURCE_DIR/examples/hello" >/dev/null
run ssh_rv run -f -g 1 --time 5m --name "$NAME-typo" -- python3 helo.py
popd >/dev/null
assert_rc 2 "a missing script is a usage error"
assert_contains "$RUN_ERR" "python3 helo.py: no such file in" "the error names the script"
assert_contains "$RUN_ERR" "did you mean hello.py?" "with a did-you-mean"
[[ -z $(squeue -h -n "$NAME-typo" -o %i) ]] || it_fail "a job reached the queue for a missing script" "$(squeue)"
run ssh_rv up -g 1 --time 5m --name "$NAME-notty"
assert_rc 2 "rv up without a terminal"
assert_contains "$RUN_ERR" "there is no terminal here" "says why"
assert_contains "$RUN_ERR" "--run CMD" "and what to do"
[[ -z $(squeue -h -n "$NAME-notty" -o %i) ]] || it_fail "rv up without a terminal submitted jobs" "$(squeue)"
# A program the login node does not have (UX review 3, N7): `bash` is there, `bash3` is not;
# `rvnosuchprog` is named with the way to check it. Nothing reaches the queue.
run ssh_rv run -f -g 1 --time 5m --no-sync --name "$NAME-noprog" -- rvnosuchprog --lr 3
assert_rc 2 "a program missing on the login node is a usage error"
assert_contains "$RUN_ERR" "rvnosuchprog: command not found on" "the error names the program"
assert_contains "$RUN_ERR" "nothing was submitted" "and says nothing was submitted"
assert_contains "$RUN_ERR" "rv exec command -v NAME" "the hint says how to check it"
[[ -z $(squeue -h -n "$NAME-noprog" -o %i) ]] || it_fail "a job reached the queue for a missing program" "$(squeue)"
pass "a missing script, a missing program and a shell without a terminal stop before the queue"

# 5. rv run without -f says what to do next.
run ssh_rv run -g 1 --time 5m --name "$NAME-next" -- sleep 30
assert_rc 0 "rv run"
nid=$(awk '/^request /{print $2; exit}' <<<"$RUN_OUT")
assert_match "$RUN_OUT" "best estimate: s[0-9]+ \\(.*\\) starts " "the best estimate is shown"
assert_contains "$RUN_OUT" "rv logs -f $nid" "how to follow it"
assert_contains "$RUN_OUT" "rv stop $nid" "how to stop it"
run ssh_rv stop "$nid"
pass "rv run without -f shows the best estimate and the next commands"
