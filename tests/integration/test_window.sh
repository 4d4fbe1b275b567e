#!/usr/bin/env bash
# The blind spot of `sbatch --test-only` on the real cluster, and rv's window model seeing past it
# (issue #12): the one-node GPU type (IT_SOLO_TYPE: gpu-a6000's 8 GPUs; ada's 2 l40s on cluster 2)
# with half its GPUs busy for an hour and a high-priority whole-node job pending with a
# reservation for when they end. --test-only places even a 2-minute job of the other half after
# that reservation; the queue (squeue) shows them idle until it. rv's plan keeps both views (the
# probes' full-length strategy, the queue's first checkpoint segment sized to the window) and the
# real `rv run` starts at once in the window (on cluster 2 the node is in the debug partition
# too: rv may win there, in the same window). Every job is cancelled on exit. Takes ~40 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ $(id -u) == 0 ]] || { echo "$IT_NAME: SKIP: needs root (a high-priority job: negative --nice)" >&2; exit 125; }
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-window-$$
T=$IT_SOLO_TYPE P=$(it_partition "$IT_SOLO_TYPE") G=$(it_gpus "$IT_SOLO_TYPE")
HALF=$((G / 2))
NODE=$(it_nodes "$IT_SOLO_TYPE")
# The partitions rv may run the request on: every partition of the node (ada and debug on cluster 2).
NODE_PARTS=$(it_node_rows "$T" | cut -d'|' -f2 | tr , '|')
cleanup_jobs() {
  local ids
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT
has_start() { squeue -h --start -j "$1" -o %S 2>/dev/null | grep -Eq '^[0-9]{4}-'; }

# ---- the situation: half the GPUs busy for an hour (two jobs where there are 4), the blocker
# reserves the node for after them ----
busy() { sbatch --parsable -p "$P" --gres="gpu:$T:$1" -c 2 --mem=8G -t 60 -J "$NAME-busy" -o /dev/null --wrap 'sleep 3600'; }
if ((HALF >= 2)); then
  busy1=$(busy $((HALF / 2))) busy2=$(busy $((HALF - HALF / 2)))
  wait_for_job_state 120 "$busy1" RUNNING
  wait_for_job_state 60 "$busy2" RUNNING
else
  busy1=$(busy "$HALF")
  wait_for_job_state 120 "$busy1" RUNNING
fi
blocker=$(sbatch --parsable -p "$P" --gres="gpu:$T:$G" -c 8 --mem=32G -t 60 --nice=-50000 -J "$NAME-blocker" \
  -o /dev/null --wrap 'sleep 3600')
wait_for 30 has_start "$blocker"
pass "$P: $HALF GPUs busy for 1 h, the high-priority $G-GPU job $blocker has a reservation"

# ---- the blind spot: --test-only says a 2-minute job starts only after the reservation ---------
run tb_as_user sbatch --test-only -D /tmp -p "$P" --gres="gpu:$T:$HALF" -c 2 --mem=8G -t 2 --wrap true
at=$(sed -n 's/.*to start at \([0-9T:-]*\).*/\1/p' <<<"$RUN_ERR")
[[ -n $at ]] || it_fail "no start time in --test-only's answer" "$(it_last_run)"
wait_s=$(($(date -d "$at" +%s) - $(date +%s)))
((wait_s > 600)) || it_fail "--test-only now sees the window (starts in ${wait_s}s): the blind spot is gone" "$(it_last_run)"
pass "sbatch --test-only: a 2-minute $HALF-GPU job starts in ${wait_s}s (after the reservation): blind"

# ---- rv's plan: the queue window and the disagreement ------------------------------------------
run ssh_rv --json run --dry-run --checkpoint -g "$HALF" -t "$T" --time 24h -- true
assert_rc 0 "rv run --dry-run"
window="[.queue_windows[] | select(.partition == \"$P\" and .gpus_per_node == $HALF)][0]"
assert_json "$window.idle_now" true "the queue model sees $HALF idle $T GPUs"
assert_json "$window.disagreement | test(\"test-only starts nothing now\")" true "the plan explains where the probes disagree"
assert_json "[.strategies[] | select(.partition == \"$P\" and .window_source == \"queue\" and .est_wait_s == 0)] | length > 0" \
  true "a strategy sized to the window starts now"
assert_json "[.strategies[] | select(.partition == \"$P\" and .window_source == \"probe\")] | length > 0" \
  true "the probes' strategy is kept too: the race decides"
pass "rv run --dry-run: queue window with the disagreement, both strategies kept"
run ssh_rv run --dry-run -v --checkpoint -g "$HALF" -t "$T" --time 24h -- true
assert_contains "$RUN_OUT" "disagreement: sbatch --test-only starts nothing now" "-v explains the disagreement"
assert_contains "$RUN_OUT" "$HALF $T GPUs idle now on $P: s" "--dry-run says which strategy uses the idle GPUs"

# ---- the real run starts at once in the window ---------------------------------------------------
t0=$(date +%s)
run ssh_rv run --checkpoint -g "$HALF" -t "$T" --time 24h --name "$NAME-rv" -- 'sleep 600'
assert_rc 0 "rv run"
started() { squeue -h -u rvtest -t R -o '%j %P %N' | grep -Eq "^$NAME-rv ($NODE_PARTS) $NODE\$"; }
wait_for 20 started
dt=$(($(date +%s) - t0))
pass "rv run: a job of the request runs on $NODE ($(squeue -h -u rvtest -t R -n "$NAME-rv" -o %P)) ${dt}s after rv started (in front of the reservation)"
run squeue -h -j "$blocker" -o %T
assert_eq PENDING "$RUN_OUT" "the blocker still waits for its reservation"
