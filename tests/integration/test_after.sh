#!/usr/bin/env bash
# rv run --after (#42 item 2, docs/taskfile.md "Pipelines") on the real cluster:
#   A. afterok chain of three: A succeeds, B (--after A) fails, C (--after B) is cancelled by Slurm
#      (--kill-on-invalid-dep) and rv says why; B and C were submitted while A (then B) still raced.
#   B. afterany: the same chain, C (--after B:any) runs after B's failure.
#   C. after an ended request: --after B:ok is refused before anything is sent; :any submits.
#   D. rv stop A stops what waits for A's success, saying why; an :any dependent is left to run.
#   E. across clusters (both clusters up): A on the other cluster, B here --after A: rv
#      answers at once, a background rv waits for A's end there and submits B; after a failed A,
#      nothing is submitted and its log says why; with -f rv waits in the foreground and follows.
# ~2 min.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# testbed-span: both (it submits on the other cluster too: ctest runs nothing on either beside it)
# test-clusters: 24.11 (22.05 and 24.11 measured alike: docs/slurm-quirks.md; passed on 22.05 too)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-after-$$
cleanup_jobs() {
  local ids
  ids=$(squeue -h -u "$TB_SSH_USER" -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT
t=$(it_gpu_types | head -n1)
submit() { # NAME-SUFFIX rv-run-args...: rv run without -f; prints the request id
  local suffix=$1
  shift
  run ssh_rv run -g 1 -t "$t" --time 5m --name "$NAME-$suffix" "$@"
  assert_rc 0 "rv run $suffix"
  it_request_id "$IT_DIR/out"
}
state_of() { jq -r .state "$(record_of "$1")"; }
refreshed_state() { ssh_rv ps -a >/dev/null 2>&1 || true; state_of "$1"; }

# ---- A. afterok: A ok, B fails, C never starts ----
a=$(submit a1 -- 'sleep 6; echo A-ran')
b=$(submit b1 --after "$a" -- 'echo B-ran; exit 3')
dep_b=$(jq -r .after.dependency "$(record_of "$b")")
assert_match "$dep_b" "^afterok:[0-9]+" "B depends on A's job(s) with afterok"
assert_eq "$a" "$(jq -r .after.request "$(record_of "$b")")" "B's record names A"
bjob=$(jq -r '.jobs[0].job_id' "$(record_of "$b")")
assert_contains "$(scontrol show job "$bjob")" "Dependency=afterok:" "Slurm holds B with the dependency"
c_run_started=$SECONDS
run ssh_rv run -f -g 1 -t "$t" --time 5m --name "$NAME-c1" --after "$b" -- 'echo C-ran'
c=$(it_request_id "$IT_DIR/out")
[[ $RUN_RC != 0 ]] || it_fail "C must not succeed" "$(it_last_run)"
assert_not_contains "$RUN_OUT" "C-ran" "C never ran"
assert_contains "$RUN_ERR" "request $c was cancelled: $b did not succeed, so --after $b:ok could never start" \
  "the message says why"
assert_eq "cancelled" "$(state_of "$c")" "C recorded cancelled"
assert_eq "done" "$(refreshed_state "$a")" "A succeeded"
assert_eq "failed" "$(refreshed_state "$b")" "B failed"
pass "A. afterok chain: A done, B failed, C cancelled by Slurm with rv's message ($((SECONDS - c_run_started)) s)"

# ---- B. afterany: C runs after B's failure ----
a=$(submit a2 -- 'sleep 4; echo A-ran')
b=$(submit b2 --after "$a" -- 'exit 3')
run ssh_rv run -f -g 1 -t "$t" --time 5m --name "$NAME-c2" --after "$b:any" -- 'echo C-ran'
assert_rc 0 "C (--after B:any) runs"
assert_contains "$RUN_OUT" "C-ran" "C's command ran"
c=$(it_request_id "$IT_DIR/out")
assert_match "$(jq -r .after.dependency "$(record_of "$c")")" "^afterany:" "C depends with afterany"
assert_eq "failed" "$(refreshed_state "$b")" "B failed"
pass "B. afterany chain: C ran after B failed"

# ---- C. after a request that has ended ----
run ssh_rv run -g 1 -t "$t" --time 5m --name "$NAME-c3" --after "$b" -- 'echo never'
assert_rc 2 "--after a failed request (ok) is refused"
assert_contains "$RUN_ERR" "request $b failed, so --after $b:ok can never start" "it says why"
assert_contains "$RUN_ERR" "--after $b:any" "the hint names :any"
run ssh_rv run -f -g 1 -t "$t" --time 5m --name "$NAME-c3" --after "$b:any" -- 'echo after-ended'
assert_rc 0 "--after an ended request with :any runs at once"
assert_contains "$RUN_OUT" "after-ended" "it ran"
assert_eq "null" "$(jq -c .after.dependency "$(record_of "$(it_request_id "$IT_DIR/out")")")" "no Slurm dependency"
run ssh_rv run -g 1 -t "$t" --time 5m --name "$NAME-c3" --after "nosuchreq" -- 'true'
assert_rc 2 "--after an unknown request"
run ssh_rv run -g 1 -t "$t" --time 5m --name "$NAME-c3" --after "$a:maybe" -- 'true'
assert_rc 2 "--after REQ:maybe"
assert_contains "$RUN_ERR" "neither ok nor any" "it says what is allowed"
pass "C. an ended request: ok after a failure refused, :any runs at once; unknown request and kind refused"

# ---- D. rv stop A stops the requests that wait for its success ----
a=$(submit a4 -- 'sleep 300')
b=$(submit b4 --after "$a" -- 'echo never')
c=$(submit c4 --after "$b" -- 'echo never')
d=$(submit d4 --after "$a:any" -- 'echo D-ran')
run ssh_rv stop "$a"
assert_rc 0 "rv stop A"
assert_contains "$RUN_OUT" "stopped request $a" "A stopped"
assert_contains "$RUN_OUT" "stopped request $b" "B (--after A) stopped too"
assert_contains "$RUN_OUT" "it ran --after $a:ok, and $a was stopped, so it could never start" "B: why"
assert_contains "$RUN_OUT" "stopped request $c" "C (--after B) stopped too: the chain goes on"
assert_not_contains "$RUN_OUT" "stopped request $d" "D (--after A:any) is left to run"
for r in "$a" "$b" "$c"; do assert_eq "cancelled" "$(state_of "$r")" "request $r cancelled"; done
run ssh_rv logs -f "$d"
assert_rc 0 "D runs after A's end"
assert_contains "$RUN_OUT" "D-ran" "D's command ran"
pass "D. rv stop A: B and C (afterok chain) stopped with why; D (afterany) ran"

# ---- E. across clusters ----
# The other cluster: rvtb from cluster 2's run, rvtb2 from cluster 1's; its lock too.
if [[ ${RV_IT_CLUSTER:-1} == 2 ]]; then
  OTHER_HOST=rvtb OTHER_ENV=${TB1_DIR:-/tmp/rv-testbed}/env OTHER_LOCK=${RV_TESTBED1_LOCK:-/tmp/rv-testbed.lock}
else
  OTHER_HOST=rvtb2 OTHER_ENV=${TB2_DIR:-/tmp/rv-testbed2}/env OTHER_LOCK=${RV_TESTBED2_LOCK:-/tmp/rv-testbed2.lock}
fi
if [[ ! -f $OTHER_ENV ]]; then
  [[ ${CI:-} != true ]] || it_fail "no other cluster: $OTHER_ENV is missing (testbed/up.sh --clusters 2)"
  printf '%s: E: SKIP: no other cluster (%s missing; testbed/up.sh --clusters 2)\n' "$IT_NAME" "$OTHER_ENV" >&2
else
  if ! tb_lock 8 "$OTHER_LOCK" exclusive "$IT_NAME"; then
    it_fail "the other cluster's lock: $(tb_lock_holders "$OTHER_LOCK")"
  fi
  # Cluster 1's ssh config names both login nodes (rvtb, rvtb2); cluster 2's only its own.
  # shellcheck source=/dev/null
  E_CONFIG=$(. "${TB1_DIR:-/tmp/rv-testbed}/env" && printf '%s' "$TB_SSH_CONFIG")
  on2() { "$RV" --ssh-config "$E_CONFIG" --host "$OTHER_HOST" "$@"; }
  here() { "$RV" --ssh-config "$E_CONFIG" --host "$TB_HOST" "$@"; }
  run on2 run -g 1 --time 5m --name "$NAME-xa" -- 'sleep 8; echo XA-ran'
  assert_rc 0 "A on the other cluster"
  a=$(it_request_id "$IT_DIR/out")
  run here run -g 1 -t "$t" --time 5m --name "$NAME-xb" --after "$a" -- 'echo XB-ran'
  assert_rc 0 "B on $TB_HOST --after A on $OTHER_HOST answers at once"
  assert_contains "$RUN_ERR" "waiting in the background for request $a to end" "it says it waits"
  assert_eq "0" "$(squeue -h -n "$NAME-xb" | wc -l)" "nothing of B is queued while A runs elsewhere"
  # shellcheck disable=SC2317  # called through wait_for
  b_done() {
    local f
    f=$(grep -l "\"$NAME-xb\"" "$RV_STATE_DIR"/requests/*.json 2>/dev/null | head -n1)
    [[ -n $f ]] || return 1
    sleep 2 # rv ps asks slurmctld: not five times a second
    here ps -a >/dev/null 2>&1 || true
    [[ $(jq -r .state "$f") == "done" ]]
  }
  wait_for 180 b_done
  b=$(jq -r .id "$(grep -l "\"$NAME-xb\"" "$RV_STATE_DIR"/requests/*.json | head -n1)")
  assert_eq "done" "$(on2 ps -a >/dev/null 2>&1; state_of "$a")" "A ended on $OTHER_HOST"
  run here logs "$b"
  assert_contains "$RUN_OUT" "XB-ran" "B ran on $TB_HOST after A"
  assert_eq "$a" "$(jq -r .after.request "$(record_of "$b")")" "B's record names A"
  # A failed elsewhere: B is never submitted; the background rv's log says why.
  run on2 run -g 1 --time 5m --name "$NAME-xc" -- 'sleep 3; exit 4'
  a2=$(it_request_id "$IT_DIR/out")
  run here run -g 1 -t "$t" --time 5m --name "$NAME-xd" --after "$a2" -- 'echo never'
  assert_rc 0 "B2 --after A2 answers at once"
  # shellcheck disable=SC2317  # called through wait_for
  log_says() { grep -qs "can never start" "$RV_STATE_DIR"/requests/after-"$a2"-*.log; }
  wait_for 180 log_says
  assert_contains "$(cat "$RV_STATE_DIR"/requests/after-"$a2"-*.log)" "request $a2 failed, so --after $a2:ok can never start" \
    "the background rv's log says why"
  assert_eq "0" "$(squeue -h -n "$NAME-xd" | wc -l)" "nothing of B2 was submitted"
  # With -f rv waits here, then submits and follows.
  run on2 run -g 1 --time 5m --name "$NAME-xe" -- 'sleep 4; echo XE-ran'
  a3=$(it_request_id "$IT_DIR/out")
  run here run -f -g 1 -t "$t" --time 5m --name "$NAME-xf" --after "$a3" -- 'echo XF-ran'
  assert_rc 0 "-f --after a request on $OTHER_HOST: waits here, then follows"
  assert_contains "$RUN_OUT" "XF-ran" "it ran and was followed"
  assert_not_contains "$RUN_ERR" "in the background" "-f waits in the foreground"
  assert_eq "done" "$(on2 ps -a >/dev/null 2>&1; state_of "$a3")" "A3 had ended first"
  pass "E. across clusters: B waited for A on $OTHER_HOST and ran after it (in the background, and with -f here); after a failed A nothing was submitted"
fi
