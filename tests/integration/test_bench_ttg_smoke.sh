#!/usr/bin/env bash
# The time-to-GPU benchmark still works (bench/ttg, docs/benchmark-time-to-gpu.md): the workload
# generator is reproducible (same seed -> the same submission sequence, another seed -> another),
# and `run.sh --short` replays the load for every contender, writes the table and the JSON with a
# row per contender, and leaves no job behind. It checks that it works, not its numbers: one
# scenario of --short's two (1x30m; the 4-GPU one replays the same code paths), about 1 minute;
# then `run.sh --estimates` with one request and an 8 s cap (about 30 s), then `run.sh --study
# --short`: a study of 6 tasks raced four ways on one seed (about 2.5 min).
# testbed-lock: exclusive (submits jobs or changes the cluster)
# test-lane: bench (scripts/test.sh --bench; docs/testing.md)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ $(id -u) == 0 ]] || { printf '%s: SKIP: needs root (background users, sdiag)\n' "$IT_NAME" >&2; exit 125; }
TTG=$RV_SOURCE_DIR/bench/ttg

# ---- reproducible workload ----
python3 "$TTG/workload.py" --seed 11 >"$IT_DIR/a.jsonl"
python3 "$TTG/workload.py" --seed 11 >"$IT_DIR/b.jsonl"
python3 "$TTG/workload.py" --seed 12 >"$IT_DIR/c.jsonl"
cmp -s "$IT_DIR/a.jsonl" "$IT_DIR/b.jsonl" || it_fail "seed 11 gave two different sequences"
! cmp -s "$IT_DIR/a.jsonl" "$IT_DIR/c.jsonl" || it_fail "seeds 11 and 12 gave the same sequence"
kinds=$(jq -r .kind "$IT_DIR/a.jsonl" | sort -u | paste -sd,)
assert_eq "arrival,blocker,queued,running" "$kinds" "the sequence has a running set, a queue, blockers and arrivals"
assert_eq "true" "$(jq -s '[.[] | select(.kind == "running" and .partition == "gpu-a100") | .nodes * .gpus_per_node] | add == 16' "$IT_DIR/a.jsonl")" \
  "gpu-a100 is saturated at t0"
pass "workload: same seed, same sequence ($(wc -l <"$IT_DIR/a.jsonl") jobs); another seed, another"

# ---- the short benchmark (it holds our lock already: RV_TESTBED_LOCKED) ----
out=$IT_DIR/ttg
run env RV_TESTBED_LOCKED=1 bash "$TTG/run.sh" --short --scenarios 1x30m --rv "$RV" --out "$out"
assert_rc 0 "bench/ttg/run.sh --short"
bench_secs=$RUN_SECS
[[ -s $out/table.md && -s $out/results.json ]] || it_fail "no table.md / results.json in $out" "$(it_last_run)"
run jq -c '[.summary.scenarios[] | .scenario]' "$out/results.json"
assert_eq '["1x30m"]' "$RUN_OUT" "one summary for the one scenario"
run jq -c '[.rows[] | [(.rv | has("ttg_s")), (.naive | has("ttg_s")), (.serial | has("ttg_s")), (.hindsight.groups | length > 0)]] | flatten | all' "$out/results.json"
assert_eq "true" "$RUN_OUT" "every row has rv, naive, serial and hindsight results"
run jq -r '.rows[] | .rv.ttg_s // "none"' "$out/results.json"
[[ $RUN_OUT != *none* ]] || it_fail "rv got no GPU within the cap in the short run" "$(cat "$out/table.md")"
assert_contains "$(cat "$out/table.md")" "| 1 GPU x 30m |" "the table has the 1-GPU row"
ls "$out"/workload-seed*.jsonl >/dev/null 2>&1 || it_fail "the submission sequence was not written"
pass "run.sh --short: table, JSON, every contender measured (${bench_secs}s)"

# ---- --estimates (#30 item 3): one single-strategy request, Slurm's estimate recorded, rv stats ----
est=$IT_DIR/est
run env RV_TESTBED_LOCKED=1 bash "$TTG/run.sh" --estimates --seeds 11 --cap 8 --settle 3 \
  --requests1 gpu-v100:v100:4 --rv "$RV" --out "$est"
assert_rc 0 "bench/ttg/run.sh --estimates"
est_secs=$RUN_SECS
run jq -c '[.samples[] | [.partition, has("rv_s"), (.actual_s | type)]]' "$est/samples.json"
assert_eq '[["gpu-v100",true,"number"]]' "$RUN_OUT" "one sample: rv's prediction and the actual wait"
assert_contains "$(cat "$est/estimates.md")" "| gpu-v100 |" "the estimates table has the partition's row"
pass "run.sh --estimates: one request, its prediction, the table (${est_secs}s)"

# ---- --study --short (#41 item 5): four arms on one seed, the limit put back, no task twice ----
limit_before=$(sacctmgr -n -P show assoc user="$TB_SSH_USER" format=maxsubmit | paste -sd,)
st=$IT_DIR/study
run env RV_TESTBED_LOCKED=1 bash "$TTG/run.sh" --study --short --rv "$RV" --out "$st"
assert_rc 0 "bench/ttg/run.sh --study --short"
st_secs=$RUN_SECS
[[ -s $st/study.md && -s $st/study.json ]] || it_fail "no study.md / study.json in $st" "$(it_last_run)"
run jq -c '[.rows[] | [.array, .loop, .every, .rv][] | (has("makespan_s") and has("su") and has("peak_queued"))] | all' "$st/study.json"
assert_eq "true" "$RUN_OUT" "every arm has a makespan, an SU and a peak"
run jq -c '[.rows[] | .rv.duplicates, (.rv.peak_queued <= .rv.limit.rvtb), (.rv.done > 0), (.array.done == 6)]' "$st/study.json"
assert_eq "[0,true,true,true]" "$RUN_OUT" "rv: no task twice, within the limit, tasks done; the array did all 6"
run jq -c '[.rows[] | [.array, .loop, .every, .rv][] | .left | length] | add' "$st/study.json"
assert_eq "0" "$RUN_OUT" "no arm left a job"
assert_eq "$limit_before" "$(sacctmgr -n -P show assoc user="$TB_SSH_USER" format=maxsubmit | paste -sd,)" \
  "the association's MaxSubmitJobs is as it was"
assert_contains "$(cat "$st/study.md")" "| rv |" "the table has rv's row"
pass "run.sh --study --short: four arms, the limit restored (${st_secs}s)"

left=$(squeue -h -u "$(printf 'rvbg%02d,' 1 2 3 4 5 6 7 8)rvtest" -o '%u %j %T' | awk '($1 ~ /^rvbg/ || $2 ~ /^ttg-/) && $3 ~ /PENDING|RUNNING/')
assert_eq "" "$left" "no background or contender job is left running or pending"
pass "nothing left in the queue"
