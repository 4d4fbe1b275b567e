#!/usr/bin/env bash
# The blind spot of `sbatch --test-only` on the real cluster, and rv's window model seeing past it
# (issue #12): gpu-a6000 with 4 of 8 GPUs busy for an hour and a high-priority 8-GPU job pending
# with a reservation for when they end. --test-only places even a 2-minute 4-GPU job after that
# reservation; the queue (squeue) shows 4 GPUs idle until it. rv's plan keeps both views (the
# probes' full-length strategy, the queue's first checkpoint segment sized to the window) and the
# real `rv run` starts at once in the window. Every job is cancelled on exit. Takes ~40 s.
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ $(id -u) == 0 ]] || { echo "$IT_NAME: SKIP: needs root (a high-priority job: negative --nice)" >&2; exit 125; }
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-window-$$
cleanup_jobs() {
  local ids
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT
has_start() { squeue -h --start -j "$1" -o %S 2>/dev/null | grep -Eq '^[0-9]{4}-'; }

# ---- the situation: 4 GPUs busy for an hour, the blocker reserves the node for after them -------
busy1=$(sbatch --parsable -p gpu-a6000 --gres=gpu:a6000:2 -c 2 --mem=8G -t 60 -J "$NAME-busy" -o /dev/null --wrap 'sleep 3600')
busy2=$(sbatch --parsable -p gpu-a6000 --gres=gpu:a6000:2 -c 2 --mem=8G -t 60 -J "$NAME-busy" -o /dev/null --wrap 'sleep 3600')
wait_for_job_state 120 "$busy1" RUNNING
wait_for_job_state 60 "$busy2" RUNNING
blocker=$(sbatch --parsable -p gpu-a6000 --gres=gpu:a6000:8 -c 8 --mem=32G -t 60 --nice=-50000 -J "$NAME-blocker" \
  -o /dev/null --wrap 'sleep 3600')
wait_for 30 has_start "$blocker"
pass "gpu-a6000: 4 GPUs busy for 1 h, the high-priority 8-GPU job $blocker has a reservation"

# ---- the blind spot: --test-only says a 2-minute job starts only after the reservation ---------
run runuser -u rvtest -- sbatch --test-only -p gpu-a6000 --gres=gpu:a6000:4 -c 2 --mem=8G -t 2 --wrap true
at=$(sed -n 's/.*to start at \([0-9T:-]*\).*/\1/p' <<<"$RUN_ERR")
[[ -n $at ]] || it_fail "no start time in --test-only's answer" "$(it_last_run)"
wait_s=$(($(date -d "$at" +%s) - $(date +%s)))
((wait_s > 600)) || it_fail "--test-only now sees the window (starts in ${wait_s}s): the blind spot is gone" "$(it_last_run)"
pass "sbatch --test-only: a 2-minute 4-GPU job starts in ${wait_s}s (after the reservation): blind"

# ---- rv's plan: the queue window and the disagreement ------------------------------------------
run ssh_rv --json run --dry-run --checkpoint -g 4 -t a6000 --time 24h -- true
assert_rc 0 "rv run --dry-run"
assert_json '[.queue_windows[] | select(.partition == "gpu-a6000" and .gpus_per_node == 4)][0].idle_now' true \
  "the queue model sees 4 idle a6000 GPUs"
assert_json '[.queue_windows[] | select(.partition == "gpu-a6000" and .gpus_per_node == 4)][0].disagreement | test("test-only starts nothing now")' \
  true "the plan explains where the probes disagree"
assert_json '[.strategies[] | select(.partition == "gpu-a6000" and .window_source == "queue" and .est_wait_s == 0)] | length > 0' \
  true "a strategy sized to the window starts now"
assert_json '[.strategies[] | select(.partition == "gpu-a6000" and .window_source == "probe")] | length > 0' \
  true "the probes' strategy is kept too: the race decides"
pass "rv run --dry-run: queue window with the disagreement, both strategies kept"
run ssh_rv run --dry-run -v --checkpoint -g 4 -t a6000 --time 24h -- true
assert_contains "$RUN_OUT" "disagreement: sbatch --test-only starts nothing now" "-v explains the disagreement"
assert_contains "$RUN_OUT" "4 a6000 GPUs idle now on gpu-a6000: s" "--dry-run says which strategy uses the idle GPUs"

# ---- the real run starts at once in the window ---------------------------------------------------
t0=$(date +%s)
run ssh_rv run --checkpoint -g 4 -t a6000 --time 24h --name "$NAME-rv" -- 'sleep 600'
assert_rc 0 "rv run"
started() { squeue -h -u rvtest -t R -o '%j %P' | grep -q "^$NAME-rv gpu-a6000"; }
wait_for 20 started
dt=$(($(date +%s) - t0))
pass "rv run: a job of the request runs on gpu-a6000 ${dt}s after rv started (in front of the reservation)"
run squeue -h -j "$blocker" -o %T
assert_eq PENDING "$RUN_OUT" "the blocker still waits for its reservation"
