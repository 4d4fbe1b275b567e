#!/usr/bin/env bash
# Issue #12, "Half a second to the first sbatch" and "Predictions that learn", on the real cluster:
# the discovery cache makes a warm plan ONE round trip (cold: 2; --no-cache: 2, nothing written),
# with the same strategies; two real requests record, per strategy, the predicted wait and what
# happened (started, or cancelled while pending); `rv stats` reports exactly the medians the
# records give.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-fastplan-$$
cleanup_jobs() { scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true; }
trap 'cleanup_jobs; it_cleanup' EXIT

# --- the discovery cache ------------------------------------------------------------------------
run ssh_rv --json up --dry-run -g 1 --time 2h
assert_rc 0 "cold dry run"
assert_json '.cache' '"cold"' "the first plan reads everything"
assert_json '.round_trips' '2' "cold: discovery, then the probes"
cold_strategies=$(jq -c '[.strategies[] | [.partition, .kind, .walltime_s]]' "$IT_DIR/out")
[[ -n $(find "$RV_STATE_DIR/cache" -name 'discovery-*.json' 2>/dev/null) ]] || it_fail "no cache file was written"
pass "cold: 2 round trips, cache written"

run ssh_rv --json up --dry-run -g 1 --time 2h
assert_rc 0 "warm dry run"
assert_json '.cache' '"warm"' "the second plan uses the cache"
assert_json '.round_trips' '1' "warm: discovery and probes in one round trip"
assert_eq "$cold_strategies" "$(jq -c '[.strategies[] | [.partition, .kind, .walltime_s]]' "$IT_DIR/out")" \
  "the warm plan has the cold plan's strategies"
pass "warm: 1 round trip, same strategies"

run ssh_rv -v up --dry-run -g 1 --time 2h
assert_rc 0 "verbose warm dry run"
assert_contains "$RUN_OUT" "in 1 round trip," "the header says one round trip"
assert_match "$RUN_OUT" "time: connect [0-9.]+ s, discovery [0-9.]+ s \(the probes ran with it\), probes [0-9.]+ s, plan [0-9.]+ s; discovery cache warm" \
  "-v shows the time split"
pass "-v shows round trips and the time split"

run ssh_rv --json up --dry-run -g 1 --time 2h --no-cache
assert_json '.cache' '"off"' "--no-cache reads everything"
assert_json '.round_trips' '2' "--no-cache: 2 round trips"
pass "--no-cache bypasses the cache"

# A corrupt cache is a miss, never an error.
for f in "$RV_STATE_DIR"/cache/discovery-*.json; do printf '{"version": 1, "outcomes": [' >"$f"; done
run ssh_rv --json up --dry-run -g 1 --time 2h
assert_rc 0 "dry run over a corrupt cache"
assert_json '.cache' '"cold"' "a corrupt cache is ignored"
pass "a corrupt cache is ignored"

# --- association facts: their own lifetime (#30 item 4) -------------------------------------------
[[ -n $(find "$RV_STATE_DIR/cache" -name 'assoc-*.json' 2>/dev/null) ]] || it_fail "no association cache file"
rm -f "$RV_STATE_DIR"/cache/discovery-*.json # as if the discovery cache had expired
run ssh_rv -v up --dry-run -g 1 --time 2h
assert_rc 0 "cold dry run with the association facts cached"
assert_contains "$RUN_OUT$RUN_ERR" "discovery cache cold" "the plan was cold"
assert_not_contains "$RUN_OUT$RUN_ERR" "association facts of" "no sacctmgr: the association facts came from their own cache"
rm -f "$RV_STATE_DIR"/cache/assoc-*.json
run ssh_rv -v up --dry-run -g 1 --time 2h
assert_contains "$RUN_OUT$RUN_ERR" "association facts of" "without them, sacctmgr runs in the warm round trip"
assert_contains "$RUN_OUT" "in 1 round trip," "still one round trip"
pass "association facts: a cold plan without sacctmgr; read in the one warm round trip when missing"

# An expired cache (#30): every fact read again, the old cluster's candidates probed with them.
for f in "$RV_STATE_DIR"/cache/discovery-*.json; do jq -c '.fetched_at -= 3600' "$f" >"$f.tmp" && mv "$f.tmp" "$f"; done
run ssh_rv --json up --dry-run -g 1 --time 2h
assert_rc 0 "dry run over an expired cache"
assert_json '.cache' '"cold"' "an expired cache is cold"
assert_json '.round_trips' '1' "expired: still one round trip (its cluster shaped the probes)"
pass "an expired cache: cold, in one round trip"

# --- predictions that learn ---------------------------------------------------------------------
occupiers=()
# A long job holding every GPU of the type the tests otherwise leave idle (h200; h100 on cluster 2).
T=$IT_IDLE_TYPE
P=$(it_partition "$T")
occupy() { occupiers+=("$(it_occupy "$T" "$NAME")"); }
run ssh_rv run -f -g 1 --time 5m --name "$NAME" -- true
assert_rc 0 "request 1 runs"
# The second with $P full: its strategy there is still pending when the winner starts, and
# the race cancels it while pending.
occupy
run ssh_rv run -f -g 1 --time 5m --name "$NAME" -- true
assert_rc 0 "request 2 runs"
scancel "${occupiers[@]}"
run ssh_rv --json ps -a
assert_rc 0 "rv ps -a --json"
cp "$IT_DIR/out" "$IT_DIR/ps.json"
assert_json 'length' '2' "two requests"
assert_json '[.[].jobs[] | select(.job_id != "") | has("predicted_wait_s") and .submitted_at != ""] | all' 'true' \
  "every submitted strategy records its prediction and submission"
assert_json '[.[] | [.jobs[] | select(.started_at != "")] | length >= 1] | all' 'true' \
  "each request records when its winner started"
assert_json '[.[].jobs[] | select(.predicted_wait_s != null and .predicted_start == "")] | length' '0' \
  "a predicted wait comes with its predicted start"
assert_json '[.[].jobs[] | select(.predicted_wait_s != null) | .predicted_by | test("^(plan|replay-[0-9]+)$")] | all' \
  'true' "each prediction names the estimator that made it (the history corrects each from its own)"
# Request 2's (the later one's): in request 1 a sibling the scheduler had not started yet when the
# best-ranked strategy claimed at once may be cancelled while pending too.
assert_json "[sort_by(.created_at) | last | .jobs[] | select(.partition == \"$P\" and .cancelled_pending_at != \"\" and .started_at == \"\")] | length" \
  '1' "the strategy on the full partition was recorded as cancelled while pending"
pass "records: predicted and actual per strategy (rv ps -a --json)"

run ssh_rv --json stats
assert_rc 0 "rv stats --json"
cp "$IT_DIR/out" "$IT_DIR/stats.json"
# The same numbers from the records themselves (docs/requests.md, "Predictions").
expected=$(jq -c '
  [.[].jobs[] | select(.predicted_wait_s != null and .submitted_at != "")
   | (.submitted_at | fromdate) as $s
   | if .started_at != "" then {p: .partition, e: (([((.started_at | fromdate) - $s), 0] | max) - .predicted_wait_s), c: 0}
     elif .cancelled_pending_at != "" and ((.cancelled_pending_at | fromdate) - $s) > .predicted_wait_s
     then {p: .partition, e: (((.cancelled_pending_at | fromdate) - $s) - .predicted_wait_s), c: 1}
     else empty end]
  | group_by(.p) | map({partition: .[0].p, started: (map(select(.c == 0)) | length),
      cancelled_pending: (map(select(.c == 1)) | length),
      median_error_s: (map(.e) | sort | .[((length - 1) / 2) | floor])})' "$IT_DIR/ps.json")
actual=$(jq -c '[.hosts[].partitions[] | {partition, started, cancelled_pending, median_error_s}]' "$IT_DIR/stats.json")
assert_eq "$expected" "$actual" "rv stats agrees with the records"
assert_json '.requests' '2' "rv stats counts both requests"
run ssh_rv stats
assert_rc 0 "rv stats (table)"
assert_contains "$RUN_OUT" "prediction history: 2 requests" "the table names the requests"
pass "rv stats: the medians the records give ($actual)"

# --- Slurm's estimate at submission, recorded in the background (#30 item 3) ------------------------
occupy
run ssh_rv --json run -t "$T" -g 1 --time 5m --name "$NAME" -- true
assert_rc 0 "a plain rv run on the full $T node(s)"
id=$(jq -r '.id // .request_id // .request.id' "$IT_DIR/out")
rec=$RV_STATE_DIR/requests/$id.json
# The record file itself (no rv ps: it would record the estimate too): the background rv wrote it.
wait_for 30 jq -e '[.jobs[] | select(.slurm_estimate != "" and .slurm_estimate_at != "")] | length >= 1' "$rec"
assert_eq "true" "$(jq '.utc_offset_s != null' "$rec")" "the request keeps the cluster's UTC offset"
scancel "${occupiers[@]}" 2>/dev/null || true
run ssh_rv stats
assert_contains "$RUN_OUT" "rv vs Slurm" "rv stats compares rv's estimates with Slurm's"
pass "Slurm's estimate at submission recorded by the background rv"
