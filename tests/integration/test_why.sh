#!/usr/bin/env bash
# `rv why` on the real cluster (docs/why.md): the one-node GPU type full (IT_SOLO_TYPE: a6000's
# 8 GPUs, l40s's 2 on cluster 2; a running whole-node job), a higher-priority whole-node job
# pending for it (`scontrol update nice=-50000`), and an rv request behind both (`rv run` without
# -f, pinned to that type). `rv why` must say the request is held behind the higher-priority job
# (Priority/Resources, in plain words), give what is ahead of it (the blocker; the running job and
# its end), and a counterfactual that would start sooner on another, idle GPU type (IT_IDLE_TYPE:
# h200, h100 on cluster 2). `rv ps` shows the reason in plain words. Then: a cancelled request gets
# its one-line end, a running one its one line. Every job is cancelled.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-why-$$
T=$IT_SOLO_TYPE P=$(it_partition "$IT_SOLO_TYPE") G=$(it_gpus "$IT_SOLO_TYPE")
IDLE_T=$IT_IDLE_TYPE IDLE_NODES=$(it_nodes "$IT_IDLE_TYPE")
filler=
blocker=
cleanup_jobs() {
  [[ -z $filler ]] || scancel "$filler" 2>/dev/null || true
  [[ -z $blocker ]] || scancel "$blocker" 2>/dev/null || true
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

idle() { [[ $(sinfo -h -N -p "$P,$(it_partition "$IDLE_T")" -o %t | sort -u) == idle ]]; }
wait_for 120 idle

# ---- the scene: the type's partition full, a high-priority whole-node job waiting for it ----
filler=$(sbatch --parsable -p "$P" --gres="gpu:$T:$G" -c 4 -t 30 -J rv-it-why-fill -o /dev/null --wrap 'sleep 1800')
wait_for_job_state 60 "$filler" RUNNING
blocker=$(sbatch --parsable -p "$P" --gres="gpu:$T:$G" -c 4 -t 30 -J rv-it-why-blocker --hold -o /dev/null \
  --wrap 'sleep 1800')
scontrol update jobid="$blocker" nice=-50000
scontrol release "$blocker"
wait_for_job_state 30 "$blocker" PENDING
# A released job keeps the reason JobHeldUser until the scheduler's next pass (1-2 s here), and
# rv why rightly leaves a held job out of what is ahead: wait for that pass (1 CI failure in 4).
released() { [[ $(squeue -h -j "$blocker" -o %r) != JobHeld* ]]; }
wait_for 30 released

run ssh_rv run -g $((G / 2)) -t "$T" --time 1h --name "$NAME" -- sleep 600
assert_rc 0 "rv run without -f"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id on stdout" "$(it_last_run)"
job=$(ssh_rv --json ps | jq -r ".[] | select(.id == \"$rid\") | .jobs[0].job_id")
[[ $job =~ ^[0-9]+$ ]] || it_fail "no job id for request $rid" "$(ssh_rv --json ps)"
has_reason() { [[ $(squeue -h -j "$job" -o %r) =~ ^(Priority|Resources)$ ]]; }
wait_for 30 has_reason
pass "scene: filler $filler running, blocker $blocker pending at high priority, rv job $job pending ($(squeue -h -j "$job" -o %r))"

# ---- rv why --json: the reason, what is ahead, an alternative that starts sooner ----
run ssh_rv --json why "$rid"
assert_rc 0 "rv why --json"
assert_json '.request' "\"$rid\"" "the request"
assert_json '.status' '"pending"' "pending"
assert_json '.jobs[0].job_id' "\"$job\"" "the job"
code=$(jq -r '.jobs[0].reason.code' "$IT_DIR/out")
[[ $code == Priority || $code == Resources ]] || it_fail "reason code $code" "$(it_last_run)"
assert_json '.jobs[0].reason.kind' '"scheduling"' "a scheduling wait"
text=$(jq -r '.jobs[0].reason.text' "$IT_DIR/out")
[[ $text == "other jobs are ahead in the queue" || $text == "waiting for free GPUs" ]] || it_fail "reason text: $text"
assert_json '.jobs[0].ahead.gpu_type' "\"$T\"" "ahead: the GPU type"
assert_json "[.jobs[0].ahead.pending[].job_id] | index(\"$blocker\") != null" 'true' "the blocker is ahead"
assert_json ".jobs[0].ahead.pending_gpus >= $G" 'true' "its $G GPUs"
assert_json '.jobs[0].ahead.running_jobs >= 1' 'true' "running jobs hold the GPUs"
assert_json '.jobs[0].ahead.first_end.job_id' "\"$filler\"" "the filler ends first"
assert_json '.replanned' 'true' "re-planned"
assert_json "[.alternatives[] | select(.start_in_s <= 300 and .strategy.gpu_type != \"$T\")] | length > 0" 'true' \
  "an alternative on another GPU type starts now"
assert_json '[.alternatives[] | select(.change == "another GPU type") | .flags[0]] | index("-t") != null' 'true' \
  "its flags pin the type"
assert_json '.round_trips <= 2' 'true' "two round trips at most"
alt=$(jq -r '.alternatives[0] | "\(.strategy.label) in \(.start_in_s)s, SU \(.est_su), flags \(.flags | join(" "))"' \
  "$IT_DIR/out")
pass "rv why --json: $code ($text); blocker $blocker ahead, filler $filler ends first; alternative: $alt; $(jq -r '"\(.round_trips) round trips, \(.seconds)s"' "$IT_DIR/out")"

# ---- the text, and the default request (the latest pending) ----
run ssh_rv why
assert_rc 0 "rv why"
assert_contains "$RUN_OUT" "request $rid is pending" "the default is the latest pending request"
assert_contains "$RUN_OUT" "ahead of it: 1 higher-priority job needs $G $T GPUs ($blocker rv-it-why-blocker" "ahead"
assert_contains "$RUN_OUT" "alternatives that would start sooner (they change the request" "alternatives, labelled"
assert_contains "$RUN_OUT" "($code)" "the raw code beside the plain words"
pass "rv why (text, default request): $(sed -n 3p "$IT_DIR/out" | sed 's/^ *//')"

# ---- rv ps: the reason in plain words; --json keeps the code ----
run ssh_rv ps
assert_rc 0 "rv ps"
assert_contains "$RUN_OUT" "$text ($code)" "rv ps shows the plain reason and the code"
run ssh_rv --json ps
assert_json ".[] | select(.id == \"$rid\") | .jobs[0].reason" "\"$code\"" "--json keeps the raw code"
assert_json ".[] | select(.id == \"$rid\") | .jobs[0].reason_text" "\"$text\"" "and adds the plain text"
pass "rv ps: '$text ($code)'"

# ---- ended: one line from sacct ----
run ssh_rv stop "$rid"
assert_rc 0 "rv stop"
gone() { [[ $(sacct -n -X -P -j "$job" -o State 2>/dev/null | cut -d' ' -f1) == CANCELLED ]]; }
wait_for 30 gone
run ssh_rv why "$rid"
assert_rc 0 "rv why on a cancelled request"
assert_eq 1 "$(wc -l <"$IT_DIR/out")" "one line"
assert_match "$RUN_OUT" "^request $rid ended.*CANCELLED" "ended, and how"
pass "ended: $RUN_OUT"

# ---- running: one line ----
scancel "$filler" "$blocker"
filler='' blocker=''
run ssh_rv run -g 1 -t "$IDLE_T" --time 5m --name "$NAME-run" -- sleep 600
assert_rc 0 "rv run ($IDLE_T, idle)"
rid2=$(it_request_id "$IT_DIR/out")
running() { ssh_rv --json why "$rid2" | jq -e '.status == "running"' >/dev/null; }
wait_for 60 running
run ssh_rv why "$rid2"
assert_eq 1 "$(wc -l <"$IT_DIR/out")" "one line"
assert_match "$RUN_OUT" "^request $rid2 is running: job [0-9]+ .* on (${IDLE_NODES// /|})" "running, where"
pass "running: $RUN_OUT"
ssh_rv stop "$rid2" >/dev/null
