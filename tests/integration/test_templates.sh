#!/bin/bash
# Submits rendered templates to the real local Slurm testbed (as root) and checks what the jobs
# did: the single-node environment, 2-node ranks, verbatim quoting, checkpoint segments continued
# by resubmission and by requeue until the requested total, a crash not continued, and two
# siblings of one request starting together running the command once. Takes about 2 minutes: the
# checkpoint chains (2 segments each) run beside the other cases, and the requeued job is started
# as soon as Slurm holds it instead of after its 2-minute hold (BeginTime = requeue time + 120 s,
# AuthInfo cred_expire): the hold is Slurm's, not rv's, and cost the test 2 of its 4 minutes.
# shellcheck disable=SC2016  # the job commands below are single-quoted on purpose
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

RENDER=${RV_RENDER_TEMPLATE:-$(dirname "$RV")/../tests/rv_render_template}
[[ -x $RENDER ]] || it_fail "no rv_render_template at $RENDER (build the rv_render_template target)"
command -v sbatch >/dev/null || it_fail "sbatch not on PATH although the testbed env exists"

# The jobs' files: on cluster 2 under $TB_DIR, which its root sees at the same path (its /tmp is
# its own).
ROOT=$IT_DIR/root
[[ -z ${TB_ROOT:-} ]] || ROOT=$TB_DIR/it-templates-$$
mkdir -p "$ROOT/logs"
# shellcheck disable=SC2317  # the EXIT trap; it keeps ROOT when the test failed, as it_cleanup IT_DIR
cleanup_root() {
  local rc=$?
  ((rc != 0 && rc != 125)) || rm -rf "$ROOT"
  (exit "$rc") # it_cleanup reads the test's exit status
  it_cleanup
}
[[ -z ${TB_ROOT:-} ]] || trap cleanup_root EXIT
# The partitions and types (tests/integration/lib.sh's roles): the 2-node type for the single and
# multi-node jobs, the one-node type, the MIG-like and CPU partitions; ck_resubmit's own GPU type.
PAIR_T=$IT_PAIR_TYPE PAIR_P=$(it_partition "$IT_PAIR_TYPE")
read -r N1 N2 <<<"$(it_nodes "$IT_PAIR_TYPE")"
SOLO_P=$(it_partition "$IT_SOLO_TYPE") IDLE_P=$(it_partition "$IT_IDLE_TYPE")
MIG_P=$(it_partition "$(it_mig_type)") CPU_P=$(it_cpu_partition)
RESUB_T=v100
[[ $TB_CLUSTER != "$TB2_CLUSTER" ]] || RESUB_T=$IT_SOLO_TYPE
RESUB_P=$(it_partition "$RESUB_T")
# Job names and request ids unique to this run: finished jobs stay in squeue for MinJobAge, and
# the guard cancels by request comment.
P=r$$-

# render NAME ARGS...: renders $ROOT/NAME.sbatch (job name NAME) or fails the test.
render() {
  local name=$1
  shift
  run "$RENDER" --root "$ROOT" --job-name "$P$name" --mem-mb 1000 "$@"
  assert_rc 0 "rendering $name"
  cp "$IT_DIR/out" "$ROOT/$name.sbatch"
}
# submit NAME: sbatch's job id of $ROOT/NAME.sbatch.
submit() {
  run sbatch --parsable "$ROOT/$1.sbatch"
  assert_rc 0 "sbatch $1"
  echo "${RUN_OUT%%;*}"
}
state_of() { squeue -h -t all -j "$1" -o %T 2>/dev/null; }
exit_code_of() { scontrol show job "$1" | grep -o 'ExitCode=[0-9:]*' | head -n 1; }
job_done() { [[ $(state_of "$1") =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; }
jobs_named() { squeue -h -t all -n "$P$1" -o %i | sort -n | tr '\n' ' '; }
log_of() { cat "$ROOT/logs/$P$1-$2.${3:-out}"; } # NAME JOBID [out|err|node0.out|...]
# job_story NAME JOBID: what Slurm and the job said about JOBID (stderr), before an assertion on its
# end state: a failure in CI then explains itself (the kept files stay on the CI machine).
job_story() {
  {
    echo "--- the story of job $2 ($1)"
    scontrol show job "$2"
    sacct -j "$2" -P -o JobID,State,ExitCode,Start,End,Elapsed
    grep -E "JobId=$2([^0-9]|\$)" "$TB_DIR/log/slurmctld.log" | tail -n 25
    for f in out err; do echo "--- $f" && log_of "$1" "$2" "$f"; done
  } >&2 2>&1 || true
}

# ---- submit everything first: the checks below then overlap with the slow checkpoint jobs ----
render ck_requeue --kind checkpoint --walltime 120 --total 100 --lead 30 --request-id "$P"it-ckrq \
  --partition "$CPU_P" \
  --command 'trap '\''echo "segment $RV_SEGMENT restart ${SLURM_RESTART_COUNT:-0} saved"; exit 0'\'' USR1
echo "segment $RV_SEGMENT of job $SLURM_JOB_ID starts"; while :; do sleep 1; done'
ck_requeue=$(submit ck_requeue)
# release_requeued JOB: polls (in the background) until Slurm holds the requeued JOB for its
# BeginTime, then lets it start now and says so; gives up when JOB ends or after 5 minutes. Segment
# 2 still has to come from Slurm's requeue (same job id, SLURM_RESTART_COUNT=1): only the wait is cut.
release_requeued() {
  local i
  for ((i = 0; i < 1500; i++)); do
    case $(squeue -h -t all -j "$1" -o '%T %r' 2>/dev/null) in
      # Not in the second of the requeue: slurmd refuses a credential issued in the second it revoked
      # the job's previous one, and the job ends FAILED (docs/slurm-quirks.md).
      "PENDING BeginTime") sleep 1.5 && scontrol update JobId="$1" StartTime=now && echo released && return ;;
      COMPLETED* | FAILED* | CANCELLED* | TIMEOUT*) return ;;
    esac
    sleep 0.2
  done
}
release_requeued "$ck_requeue" >"$IT_DIR/release.log" 2>&1 &
release_pid=$!

render ck_resubmit --kind checkpoint --walltime 120 --total 100 --lead 30 --request-id "$P"it-ckrs \
  --no-requeue --signal USR2 --partition "$RESUB_P" --gres "gpu:$RESUB_T:1" \
  --command 'trap '\''echo "segment $RV_SEGMENT saved"; exit 0'\'' USR2
echo "segment $RV_SEGMENT of job $SLURM_JOB_ID starts"; while :; do sleep 1; done'
first_resubmit=$(submit ck_resubmit)

render ck_multi --kind checkpoint --nodes 2 --walltime 120 --total 100 --lead 30 --request-id "$P"it-ckmn \
  --no-requeue --partition "$PAIR_P" --gres "gpu:$PAIR_T:1" --gpus-per-node 1 \
  --command 'trap '\''echo "node $NODE_RANK segment $RV_SEGMENT saved"; exit 0'\'' USR1
while :; do sleep 1; done'
first_multi=$(submit ck_multi)

render single --partition "$PAIR_P" --gres "gpu:$PAIR_T:2" --cpus 4 --gpus-per-node 2 --request-id "$P"it-single \
  --command 'echo "cvd=$CUDA_VISIBLE_DEVICES omp=$OMP_NUM_THREADS port=$MASTER_PORT now=$(date +%s) end=$RV_JOB_END_TIME"
echo "ckpt=$RV_CHECKPOINT_DIR out=$RV_OUTPUT_DIR hf=$HF_HOME"'
single=$(submit single)

cat >"$IT_DIR/nasty.txt" <<'NASTY'
printf '<%s>\n' "it's" '$HOME' "$RV_JOB_NAME" 'a  b' "back\`tick\`" 'ünïcödé ✓' '*' "$(echo sub)" 'semi;colon' 'pipe|amp&' "dq\"inside"
echo "second line $((1 + 2))"; exit 7
NASTY
render nasty --partition "$SOLO_P" --command-file "$IT_DIR/nasty.txt"
nasty=$(submit nasty)

render multi --nodes 2 --partition "$PAIR_P" --gres "gpu:$PAIR_T:1" --gpus-per-node 1 --request-id "$P"it-multi \
  --command 'echo "rank=$NODE_RANK world=$WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT node=$SLURMD_NODENAME"'
multi=$(submit multi)

render crash --kind checkpoint --walltime 120 --total 600 --lead 30 --request-id "$P"it-crash --partition "$IDLE_P" \
  --command 'echo crashing; exit 3'
crash=$(submit crash)

render race_a --partition "$MIG_P" --request-id "$P"it-race \
  --command "echo \"ran in \$SLURM_JOB_ID\" >>'$ROOT/race.txt'; sleep 5"
sed "s/^#SBATCH --partition=\"$MIG_P\"\$/#SBATCH --partition=\"$SOLO_P\"/" "$ROOT/race_a.sbatch" >"$ROOT/race_b.sbatch"
cmp -s "$ROOT/race_a.sbatch" "$ROOT/race_b.sbatch" && it_fail "race_b is race_a: the partition line was not found"
race_a=$(submit race_a)
race_b=$(submit race_b)

# ---- single node: environment and GPUs ----
wait_for 60 job_done "$single"
assert_eq COMPLETED "$(state_of "$single")" "single-node job state"
log=$(log_of single "$single" out)
# Two of the node's GPUs (which two depends on the other jobs running there).
assert_match "$log" "cvd=[0-9]+,[0-9]+ omp=4 port=$((20000 + single % 20000)) " "single-node environment"
assert_contains "$log" "ckpt=$ROOT/checkpoints/it/${P}single out=$ROOT/outputs/${P}single-$single hf=$ROOT/cache/huggingface" \
  "single-node directories"
[[ $log =~ now=([0-9]+)\ end=([0-9]+) ]] || it_fail "no now/end in the log" "$log"
left=$((BASH_REMATCH[2] - BASH_REMATCH[1]))
((left > 100 && left <= 121)) || it_fail "RV_JOB_END_TIME is ${left}s after the command started, expected about 120" "$log"
pass "single node: CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, MASTER_PORT, RV_JOB_END_TIME, directories"

# ---- verbatim quoting and exit status ----
wait_for 60 job_done "$nasty"
assert_eq FAILED "$(state_of "$nasty")" "nasty job state"
assert_eq ExitCode=7:0 "$(exit_code_of "$nasty")" "nasty job exit code"
expected=$(HOME=$HOME RV_JOB_NAME=${P}nasty bash -c "$(<"$IT_DIR/nasty.txt")" || true)
actual=$(log_of nasty "$nasty" out)
assert_eq "$expected" "$actual" "the command's output in the job equals bash -c of the typed text"
assert_contains "$actual" "<back\`tick\`>" "backticks kept"
pass "nasty quoting reaches the job byte for byte; exit status 7 is the job's"

# ---- multi-node ----
wait_for 60 job_done "$multi"
assert_eq COMPLETED "$(state_of "$multi")" "multi-node job state"
node0=$(log_of multi "$multi" node0.out)
node1=$(log_of multi "$multi" node1.out)
port=$((20000 + multi % 20000))
assert_contains "$node0" "rank=0 world=2 addr=$N1 port=$port node=$N1" "node 0"
assert_contains "$node1" "rank=1 world=2 addr=$N1 port=$port node=$N2" "node 1"
pass "2 nodes: NODE_RANK 0/1, same MASTER_ADDR and MASTER_PORT, per-node logs"

# ---- race guard ----
wait_for 60 job_done "$race_a"
wait_for 60 job_done "$race_b"
ran=$(<"$ROOT/race.txt")
assert_eq 1 "$(grep -c 'ran in' <<<"$ran")" "the request's command ran once"
winner=$(cat "$ROOT/rv/requests/${P}it-race/claim/owner")
loser=$([[ $winner == "$race_a" ]] && echo "$race_b" || echo "$race_a")
assert_eq "ran in $winner" "$ran" "the claim's owner ran the command"
assert_eq COMPLETED "$(state_of "$winner")" "winner state"
assert_eq CANCELLED "$(state_of "$loser")" "loser state"
pass "two siblings started together: one ran, the other was cancelled"

# ---- crash in a checkpoint job: not continued ----
wait_for 60 job_done "$crash"
assert_eq FAILED "$(state_of "$crash")" "crashed checkpoint job state"
assert_eq ExitCode=3:0 "$(exit_code_of "$crash")" "crashed checkpoint job exit code"
assert_eq "$crash " "$(jobs_named crash)" "no further segment of the crashed job"
assert_contains "$(log_of crash "$crash" err)" "not continuing" "crash message"
pass "checkpoint: a crash is not continued"

# ---- checkpoint by resubmission: 100 s of work in 2-minute segments ----
# Slurm's --signal may come up to ~30 s early here (60 s on real clusters): a segment holds 60-90 s
# of work, so 2 segments (3 when the scheduler is slow to start the second).
# chain_done NAME: the newest job named NAME ended, and did not hand over to a next segment.
chain_done() {
  local last
  last=$(jobs_named "$1")
  last=${last% }
  last=${last##* }
  job_done "$last" || return 1
  [[ $(state_of "$last") != COMPLETED ]] || grep -q 'reached' "$ROOT/logs/$P$1-$last.err"
}
# shellcheck disable=SC2317  # called through wait_for
resubmit_done() { chain_done ck_resubmit; }
wait_for 270 resubmit_done
read -r -a segs <<<"$(jobs_named ck_resubmit)"
assert_eq "$first_resubmit" "${segs[0]}" "first segment"
((${#segs[@]} >= 2 && ${#segs[@]} <= 3)) || it_fail "expected 2-3 segments of ck_resubmit, got ${segs[*]}"
n=0
for id in "${segs[@]}"; do
  n=$((n + 1))
  assert_eq COMPLETED "$(state_of "$id")" "segment $n ($id) state"
  assert_contains "$(log_of ck_resubmit "$id" out)" "segment $n saved" "segment $n was signalled with USR2"
done
assert_contains "$(log_of ck_resubmit "${segs[-1]}" err)" "requested total of 100s reached" "stop message"
elapsed=$(<"$ROOT/checkpoints/it/${P}ck_resubmit/.rv/${P}it-ckrs/elapsed_s")
((elapsed >= 100 && elapsed < 150)) || it_fail "elapsed_s is $elapsed, expected 100-150"
pass "checkpoint (resubmit, USR2): ${#segs[@]} segments signalled and resubmitted, stopped after the total (${elapsed}s)"

# ---- checkpoint on 2 nodes: the signal reaches both nodes' commands ----
# shellcheck disable=SC2317  # called through wait_for
multi_done() { chain_done ck_multi; }
wait_for 270 multi_done
read -r -a segs <<<"$(jobs_named ck_multi)"
assert_eq "$first_multi" "${segs[0]}" "first 2-node segment"
((${#segs[@]} >= 2)) || it_fail "expected 2 or more segments of ck_multi, got ${segs[*]}"
n=0
for id in "${segs[@]}"; do
  n=$((n + 1))
  assert_eq COMPLETED "$(state_of "$id")" "2-node segment $n ($id) state"
  assert_contains "$(log_of ck_multi "$id" node0.out)" "node 0 segment $n saved" "node 0 of segment $n signalled"
  assert_contains "$(log_of ck_multi "$id" node1.out)" "node 1 segment $n saved" "node 1 of segment $n signalled"
done
assert_contains "$(log_of ck_multi "${segs[-1]}" err)" "requested total of 100s reached" "2-node stop message"
pass "checkpoint on 2 nodes: ${#segs[@]} segments, both nodes signalled each time, stopped after the total"

# ---- checkpoint by requeue: same job id; Slurm holds it 120 s in between, release_requeued less ----
wait_for 330 job_done "$ck_requeue"
state=$(state_of "$ck_requeue")
[[ $state == COMPLETED ]] || job_story ck_requeue "$ck_requeue"
assert_eq COMPLETED "$state" "requeued checkpoint job state"
log=$(log_of ck_requeue "$ck_requeue" out)
assert_contains "$log" "segment 1 restart 0 saved" "segment 1 signalled"
assert_contains "$log" "segment 2 restart 1 saved" "segment 2 ran after the requeue and was signalled at the total"
assert_eq "$ck_requeue " "$(jobs_named ck_requeue)" "requeue keeps one job id"
wait "$release_pid" || true
assert_eq released "$(<"$IT_DIR/release.log")" "Slurm held the requeued job for its BeginTime (released by the test)"
elapsed=$(<"$ROOT/checkpoints/it/${P}ck_requeue/.rv/${P}it-ckrq/elapsed_s")
((elapsed >= 100 && elapsed < 150)) || it_fail "elapsed_s is $elapsed, expected 100-150"
pass "checkpoint (requeue): signalled, requeued under the same id, stopped after the total (${elapsed}s)"
