#!/usr/bin/env bash
# Hardware retry: a job that dies within minutes of starting with a GPU-fault signature in its
# stderr is planned again without that node, and the retry runs elsewhere; an ordinary failure
# is not retried. On the two-node GPU type (IT_PAIR_TYPE: a100, h100 on cluster 2).
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
marker=".rv-it-hw-$$-$RANDOM"
cleanup_marker() { ssh_rv exec rm -f "$marker" >/dev/null 2>&1 || true; }
trap 'cleanup_marker; it_cleanup' EXIT

# The first run (wherever it lands) fails like a broken GPU; any later run succeeds.
# shellcheck disable=SC2016  # expanded in the job
cmd='if [ ! -e ~/'"$marker"' ]; then touch ~/'"$marker"'; echo "RuntimeError: CUDA error: unknown error" >&2; exit 1; fi; echo "ok on $SLURMD_NODENAME"'
run ssh_rv run -f -t "$IT_PAIR_TYPE" --time 5m -- "$cmd"
assert_rc 0 "the retry succeeds"
assert_contains "$RUN_ERR" "GPU fault" "the retry names the fault"
bad=$(sed -n 's/.*GPU fault .* on \([a-z0-9-]*\): retrying.*/\1/p' "$IT_DIR/err" | head -1)
good=$(sed -n 's/^ok on //p' "$IT_DIR/out")
[[ -n $bad && -n $good && $bad != "$good" ]] || it_fail "the retry must run on another node (bad=$bad good=$good)" "$(it_last_run)"
pass "a GPU fault is retried without the faulty node ($bad -> $good)"

# An ordinary crash is the user's bug: no retry, its exit status comes back.
run ssh_rv run -f -t "$IT_PAIR_TYPE" --time 5m -- 'echo "KeyError: lr" >&2; exit 4'
assert_rc 4 "an ordinary failure keeps its exit status"
assert_not_contains "$RUN_ERR" "retrying" "an ordinary failure is not retried"
pass "an ordinary failure is not retried"
