#!/usr/bin/env bash
# rv up --dry-run and rv cost against the real cluster: busy partitions get long or unknown waits,
# free ones start now, long requests get checkpoint segments, SU matches Slurm's own billing, and
# every dropped type says why. Discovery and probes take at most 2 round trips.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

ssh_rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
# Each cluster's shape (docs/testbed.md): what to fill, what stays free, what the answers name.
if [[ $TB_CLUSTER == rvtest2 ]]; then # Slurm 24.11 (integration24.test_plan)
  FILL=("hopper gpu:h100:4" "hopper gpu:h100:4")
  FREE='.partition == "ada"' BUSY='.partition == "hopper"' FREE_LIST='"ada"'
  CKPT_TYPE=l40s ONLY_TYPE=h100 REJECTED='["ada","debug","mig"]' BAD_TYPE=h10
  TOO_MANY="1000 GPUs exceed the cluster's per-user GPU limit (8)"
  BILL_P=ada BILL_T=l40s DEAR_P=hopper
  # rvtest's QOS rvlimit has MaxWall 1 day (testbed/lib2.sh), shorter than ada's MaxTime (2 days).
  MAX_WALL=86400 LONGEST_ERR="rv: error: --time is longer than QOS rvlimit allows (MaxWall 1-00:00:00, shorter than"
else # Slurm 22.05
  FILL=("gpu-a100 gpu:a100:8" "gpu-a100 gpu:a100:8" "gpu-h200 gpu:h200:4")
  FREE='.partition == "gpu-a6000" or .partition == "gpu-v100"' BUSY='.partition == "gpu-a100" or .partition == "gpu-h200"'
  FREE_LIST='"gpu-a6000", "gpu-v100"'
  CKPT_TYPE=v100 ONLY_TYPE=a100 REJECTED='["gpu-a6000","gpu-h200","gpu-mig","gpu-v100"]' BAD_TYPE=a10
  TOO_MANY="at most 16 a100 GPUs in one job (2 nodes x 8); asked for 1000"
  BILL_P=gpu-v100 BILL_T=v100 DEAR_P=gpu-h200
  MAX_WALL=172800 LONGEST_ERR="rv: error: --time is longer than every GPU partition's MaxTime (the longest is 2-00:00:00)"
fi
jobs_to_cancel=()
cleanup_jobs() { ((${#jobs_to_cancel[@]} == 0)) || scancel "${jobs_to_cancel[@]}" 2>/dev/null || true; }
trap 'cleanup_jobs; it_cleanup' EXIT

occupy() { # partition gres: a long job that holds every GPU of the partition's nodes
  local id
  id=$(sbatch --parsable -p "$1" --gres="$2" -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
  jobs_to_cancel+=("$id")
  wait_for_job_state 30 "$id" RUNNING
}

# Idle cluster: two round trips after connecting, every type starts now.
run ssh_rv --json up --dry-run -g 2 --time 3h
assert_rc 0 "dry-run on an idle cluster"
assert_json '.round_trips' '2' "discovery and all probes take 2 round trips"
assert_json '.slurm_version' "\"$TB_SLURM_VERSION\"" "the plan names the cluster's Slurm version (read in discovery)"
assert_json '[.strategies[] | select(.est_wait_s == null or .est_wait_s > 300)] | length' '0' "idle: every strategy starts now"
assert_json '[.strategies[] | .nodes * .gpus_per_node] | unique' '[2]' "every topology is exactly 2 GPUs"
assert_json '[.strategies[] | select(.nodes == 2)] | length > 0' 'true' "a 2x1 topology is offered"
pass "idle cluster: 2 round trips, every strategy starts now, exact topologies"

# Fill the busy partitions (22.05: gpu-a100's both nodes and gpu-h200; 24.11: hopper) with long jobs.
for fill in "${FILL[@]}"; do
  # shellcheck disable=SC2086  # partition and gres
  occupy $fill
done
run ssh_rv --json up --dry-run -g 2 --time 3h
assert_rc 0 "dry-run on a busy cluster"
assert_json "[.windows[] | select($FREE) | .full_start_in_s <= 300] | all" 'true' \
  "free partitions start now"
assert_json "[.windows[] | select($BUSY) | (.full_start_in_s == null or .full_start_in_s > 600)] | all" 'true' \
  "busy partitions wait long or unknown"
assert_json ".strategies[0].partition | IN($FREE_LIST)" 'true' "a free type ranks first"
pass "busy partitions wait, free ones start now and rank first"

# A batch request longer than MaxTime (2 days; the QOS MaxWall of 1 day on cluster 2) gets
# checkpoint segments where a window exists
# (`rv up` never does: an interactive allocation cannot be split).
# Segments are opt-in (--checkpoint): the program must save and resume its state (#13).
run ssh_rv --json run --dry-run --checkpoint -g 1 --time 3d -t "$CKPT_TYPE" -- python train.py
assert_rc 0 "3-day request"
assert_json '[.strategies[] | .kind] | unique' '["checkpoint"]' "only checkpoint strategies beyond MaxTime"
assert_json "[.strategies[] | .walltime_s <= $MAX_WALL and .total_time_s == 259200] | all" 'true' \
  "segments within MaxTime (and the QOS MaxWall), total kept"
run ssh_rv run --dry-run -g 1 --time 99d -- python train.py
assert_rc 4 "beyond every MaxTime without --checkpoint: no viable strategy"
assert_contains "$RUN_ERR" "$LONGEST_ERR" "the error says what is wrong"
assert_contains "$RUN_ERR" "rv: hint: pass --checkpoint" "and names the flag"
run ssh_rv run -g 1 --time 99d -- true
assert_rc 4 "the real run is refused the same way, before any sbatch"
pass "a 3-day request gets checkpoint segments with --checkpoint; without it, exit 4 naming --checkpoint"

# A QOS MaxWall shorter than a partition's MaxTime (#27; cluster 2 only: 22.05's QOS have none):
# Slurm holds a 36-hour job on ada for ever; rv refuses to plan it, or plans segments of 1 day.
if [[ $TB_CLUSTER == rvtest2 ]]; then
  id=$(tb_as_user sbatch --parsable -D /tmp -p ada --gres=gpu:l40s:1 -t 36:00:00 -o /dev/null --wrap true)
  jobs_to_cancel+=("$id")
  # shellcheck disable=SC2317  # called through wait_for
  held() { [[ $(squeue -h -j "$id" -o '%T %r') == "PENDING QOSMaxWallDurationPerJobLimit" ]]; }
  wait_for 20 held
  scancel "$id"
  run ssh_rv --json run --dry-run -g 1 -t l40s --time 36h -- true
  assert_rc 4 "36 h beyond the QOS MaxWall: no viable strategy"
  assert_json '[.rejected[] | select(.partition == "ada") | .reason]' \
    '["--time 1-12:00:00 exceeds QOS rvlimit'"'"'s MaxWall 1-00:00:00 and checkpointing is off"]' "ada is dropped, naming the QOS"
  run ssh_rv run --dry-run -g 1 -t l40s --time 36h -- true
  assert_contains "$RUN_ERR" "rv: error: --time is longer than QOS rvlimit allows (MaxWall 1-00:00:00" "the error names the QOS"
  assert_contains "$RUN_ERR" "--time 1-00:00:00 or less" "the hint gives the longest time allowed"
  run ssh_rv --json run --dry-run --checkpoint -g 1 -t l40s --time 36h -- true
  assert_rc 0 "with --checkpoint"
  assert_json '[.strategies[] | select(.partition == "ada") | .kind == "checkpoint" and .walltime_s <= 86400] | all' 'true' \
    "ada: segments of at most the QOS MaxWall"
  run ssh_rv --json run --dry-run --qos normal -g 1 -t l40s --time 36h -- true
  assert_json '[.strategies[] | select(.partition == "ada") | .walltime_s] | unique' '[129600]' "--qos normal (no MaxWall): 36 h on ada"
  pass "QOS MaxWall 1 day < ada's MaxTime: Slurm holds a 36 h job ($id: QOSMaxWallDurationPerJobLimit); rv refuses it, or segments it"
fi

# The rejected list explains every dropped type.
run ssh_rv --json up --dry-run -g 2 --time 1h -t "$ONLY_TYPE"
assert_json '[.rejected[] | select(.reason == "")] | length' '0' "every rejection has a reason"
assert_json '[.rejected[] | .partition] | sort' "$REJECTED" "the other types are dropped"
run ssh_rv up --dry-run -g 1 -t "$BAD_TYPE"
assert_rc 2 "an unknown type is a usage error"
assert_contains "$RUN_ERR" "did you mean '$ONLY_TYPE'" "did-you-mean for an unknown type"
run ssh_rv up --dry-run -g 0
assert_rc 2 "0 GPUs is a usage error"
run ssh_rv up --dry-run --time 0h
assert_rc 2 "0h is a usage error"
pass "rejections carry reasons; bad types, counts and times are clear errors"

# A dry run predicts the real run: nothing viable is exit 4 for both, so scripts can chain them.
run ssh_rv up --dry-run -g 1000
assert_rc 4 "a dry run with no viable strategy exits 4"
assert_contains "$RUN_OUT" "$TOO_MANY" "one summary line per type"
assert_contains "$RUN_ERR" "no viable strategy" "the error says why"
run ssh_rv --json up --dry-run -g 1 --mem 99999G
assert_rc 4 "--mem beyond every node exits 4, --json too"
assert_json '.strategies | length' '0' "--json: the plan is still the document"
run ssh_rv run -g 1000 -- true
assert_rc 4 "the real run exits 4 as its dry run did"
run ssh_rv up --dry-run -g 1 --exclude nosuchnode
assert_rc 4 "a request Slurm refuses (unknown node) is not viable in the dry run either"
assert_contains "$RUN_OUT" "Slurm refuses it: Invalid node name specified" "the probe's Slurm error is shown"
run ssh_rv up --dry-run -g 1
assert_rc 0 "a viable dry run exits 0"
pass "no viable strategy: exit 4 for dry and real runs, summaries per type"

# SU follows the configured weights: rv's billing for a shape equals what Slurm bills for it.
run ssh_rv --json cost -g 1 --time 1h
assert_rc 0 "rv cost"
row=$(jq -c ".rows[] | select(.partition == \"$BILL_P\")" "$IT_DIR/out")
cpus=$(jq -r .cpus_per_task <<<"$row") mem=$(jq -r .mem_mb <<<"$row") billing=$(jq -r '.billing | floor' <<<"$row")
id=$(sbatch --parsable -p "$BILL_P" --gres="gpu:$BILL_T:1" -c "$cpus" --mem="${mem}M" -t 5 -o /dev/null --wrap 'sleep 60')
jobs_to_cancel+=("$id")
wait_for_job_state 30 "$id" RUNNING
slurm_billing=$(scontrol show job "$id" | grep -o 'billing=[0-9]*' | head -1 | cut -d= -f2)
assert_eq "$slurm_billing" "$billing" "rv's billing for 1 $BILL_T equals Slurm's"
assert_json "[.rows[] | select(.partition == \"$DEAR_P\") | .su] > [.rows[] | select(.partition == \"$BILL_P\") | .su]" 'true' \
  "$DEAR_P (higher GRES/gpu weight) costs more than $BILL_P"
pass "SU matches Slurm's billing ($slurm_billing) and follows the weights"
