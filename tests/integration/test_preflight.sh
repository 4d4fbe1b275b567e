#!/usr/bin/env bash
# The in-job GPU preflight and the re-fan-out around a bad node, on the real cluster: with the
# first node of the two-node GPU type broken (a100-1, h100-1 on cluster 2; the stand-in
# nvidia-smi's fault=nodevices), `rv run -f -t TYPE` never runs the command there, races again
# without it, and finishes on the second node without the user doing anything; the request records
# keep the history. Also: --no-preflight runs the command anyway.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
tag="pf$$$RANDOM"
T=$IT_PAIR_TYPE
read -r N1 N2 <<<"$(it_nodes "$T")"
fault=$TB_DIR/gpu/$N1/fault
restore() {
  rm -f "$fault" # the testbed has no fault file by default
  ssh_rv exec sh -c "scancel -u rvtest -n rv-$tag-a,rv-$tag-b,rv-$tag-c,rv-$tag-d 2>/dev/null; rm -f ~/.rv-it-$tag-*" \
    >/dev/null 2>&1 || true
}
trap 'restore; it_cleanup' EXIT
[[ -z $(sinfo -h -n "$N1,$N2" -t alloc,mix,drain,down -o %n 2>/dev/null) ]] ||
  it_fail "$N1 and $N2 must be idle for this test" "$(sinfo -N -n "$N1,$N2")"

echo nodevices >"$fault"
# shellcheck disable=SC2016  # expanded in the job
cmd='touch ~/.rv-it-'"$tag"'-"$SLURMD_NODENAME"; echo "ran on $SLURMD_NODENAME"'
run ssh_rv run -f -t "$T" --time 5m --name "rv-$tag-a" -- "$cmd"
assert_rc 0 "the request finishes after the re-fan-out"
assert_contains "$RUN_ERR" "node $N1 failed the preflight (nvidia-smi: No devices were found)" \
  "rv names the node and the reason"
assert_contains "$RUN_ERR" "retrying without $N1 (round 1/2" "rv says it races again"
assert_contains "$RUN_OUT" "ran on $N2" "the command ran on the healthy node"
run ssh_rv exec sh -c "ls ~/.rv-it-$tag-* 2>/dev/null"
assert_contains "$RUN_OUT" ".rv-it-$tag-$N2" "the marker of $N2 exists"
assert_not_contains "$RUN_OUT" ".rv-it-$tag-$N1" "nothing of the user's ran on $N1"
pass "a node that fails the preflight never runs the command; the request finishes on $N2"

run ssh_rv --json ps -a
assert_json "[.[] | select(.name == \"rv-$tag-a\") | .refanout.history[0].node] | unique" "[\"$N1\"]" \
  "both records keep the failed node"
assert_json "[.[] | select(.name == \"rv-$tag-a\") | select(.refanout.next_request != \"\") | .state]" '["failed"]' \
  "the first round is recorded failed, pointing at the next"
assert_json "[.[] | select(.name == \"rv-$tag-a\") | select(.refanout.next_request == \"\") | .refanout.excluded]" \
  "[[\"$N1\"]]" "the second round excluded $N1"
run ssh_rv ps -a
assert_contains "$RUN_OUT" "! $N1 failed the preflight (nvidia-smi: No devices were found)" "rv ps shows the history"
pass "the request records and rv ps keep the history"

# The winner's log has the one-line reason, and sacct the documented exit code 96.
run ssh_rv --json ps -a
first_job=$(jq -r "[.[] | select(.name == \"rv-$tag-a\") | .refanout.history[0].job_id][0]" "$IT_DIR/out")
run ssh_rv exec sh -c "cat ~/.rv/logs/rv-$tag-a-$first_job.err"
assert_contains "$RUN_OUT" "rv preflight: FAIL node=$N1 reason=nvidia-smi: No devices were found" "the log's reason line"
run ssh_rv exec scontrol show job "$first_job"
assert_contains "$RUN_OUT" "ExitCode=96:0" "the failed job's exit code is 96"
pass "the failed job exited 96 with the reason in its log"

# --no-preflight: the user takes the node as it is.
run ssh_rv run -f -t "$T" --time 5m --exclude "$N2" --no-preflight --name "rv-$tag-b" -- "$cmd"
assert_rc 0 "--no-preflight runs the command"
assert_contains "$RUN_OUT" "ran on $N1" "on the faulty node"
pass "--no-preflight turns the check off"

# A healthy node: the time the preflight adds, from its own line.
rm -f "$fault"

# A command that exits 96 itself ran: it is never taken for a preflight failure and never rerun (N2).
# shellcheck disable=SC2016  # expanded in the job
run ssh_rv run -f -t "$T" --time 5m --name "rv-$tag-d" -- 'echo x >> ~/.rv-it-'"$tag"'-ran96; exit 96'
assert_rc 96 "rv exits with the command's own status"
assert_not_contains "$RUN_ERR" "failed the preflight" "no preflight failure is reported"
run ssh_rv exec sh -c "wc -l < ~/.rv-it-$tag-ran96"
assert_match "$RUN_OUT" "^ *1$" "the command ran exactly once"
pass "a command that exits 96 runs once and is not retried"

run ssh_rv run -f -t "$T" --time 5m --name "rv-$tag-c" -- "$cmd"
assert_rc 0 "a healthy run"
run ssh_rv --json ps -a
job=$(jq -r "[.[] | select(.name == \"rv-$tag-c\") | .jobs[] | select(.state == \"COMPLETED\") | .job_id][0]" "$IT_DIR/out")
run ssh_rv exec sh -c "grep '^rv preflight: ok' ~/.rv/logs/rv-$tag-c-$job.err"
assert_match "$RUN_OUT" "rv preflight: ok node=($N1|$N2) gpus=1/1 driver=535.104.05 time_ms=[0-9]+" "the ok line"
pass "a healthy node passes ($(sed -n 's/.*time_ms=//p' "$IT_DIR/out") ms)"
