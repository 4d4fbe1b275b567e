#!/usr/bin/env bash
# `rv run --in REQUEST` (issue #42 item 1) on the real cluster through the loopback login node:
# - `rv up --keep` returns once the allocation is won and leaves it held;
# - `rv run --in -f` runs a command as a step of that job: in the project's snapshot, with the
#   job's environment and GPUs, once, its words byte for byte, its exit status returned, its output
#   kept as the step's log (`rv logs REQ/step-N`);
# - a `--time` longer than what is left is refused before anything is sent;
# - two `--in` at once; `rv ps REQ` lists them; `rv stop REQ/step-N` stops that step alone;
# - on a 2-node allocation: one task per node with NODE_RANK/WORLD_SIZE/MASTER_ADDR; --one: one task;
# - Ctrl-C on `rv run --in -f` at a terminal (tmux) stops the step, not the allocation.
# Two allocations of a few minutes; about two minutes on an idle cluster.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# test-clusters: both (srun steps and squeue --steps are Slurm-version facing)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

command -v tmux >/dev/null || it_fail "tmux is not installed (scripts/lib.sh installs it)"
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-in-$$
IT_TMUX_SOCK=rv-it-in-$$
cleanup_in() {
  local ids
  tm kill-server 2>/dev/null || true
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_in; it_cleanup' EXIT

# The steps Slurm runs in job $1, by name ("NAME" lines).
step_names() { squeue -h --steps -j "$1" -o '%j' 2>/dev/null | grep -F ".step-" || true; }
# The REQ/step-N a detached `rv run --in` printed.
started_ref() { sed -n 's/^started \([0-9a-f]*\/step-[0-9]*\) in job .*/\1/p' "$IT_DIR/out" | head -n1; }

# ---- a project: eval.py says where it runs, what it sees, and counts its runs ----
mkdir -p "$IT_DIR/proj/src"
printf '# none\n' >"$IT_DIR/proj/requirements.txt"
cat >"$IT_DIR/proj/src/eval.py" <<'PY'
import os, subprocess, sys
e = os.environ
gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
with open(os.path.join(e["HOME"], "rv-it-in-runs-" + e["RV_REQUEST_ID"]), "a") as f:
    f.write("%s\n" % e.get("NODE_RANK", "-"))
print("EVAL cwd=%s job=%s rid=%s cvd=%s smi=%d rank=%s world=%s master=%s hf=%s" % (
    os.getcwd(), e.get("SLURM_JOB_ID"), e.get("RV_REQUEST_ID"), e.get("CUDA_VISIBLE_DEVICES", ""), gpus,
    e.get("NODE_RANK", "-"), e.get("WORLD_SIZE", "-"), e.get("MASTER_ADDR", "-"), e.get("HF_HOME", "")))
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
PY
cd "$IT_DIR/proj/src"

# ---- rv up --keep: returns once won, the allocation stays ----
run ssh_rv up --keep -g 1 -t "$IT_IDLE_TYPE" --time 10m --name "$NAME-one"
assert_rc 0 "rv up --keep returns once the allocation is won ($RUN_ERR)"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id from rv up --keep" "$RUN_OUT" "$RUN_ERR"
job=$(squeue -h -n "$NAME-one" -t R -o %i)
[[ -n $job ]] || it_fail "rv up --keep returned without a running allocation" "$(squeue)"
assert_contains "$RUN_OUT" "holding allocation $job" "it says which allocation it holds"
assert_contains "$RUN_OUT" "rv run --in $rid" "and how to use it"
sleep 2
assert_eq "RUNNING" "$(squeue -h -j "$job" -o %T)" "the allocation outlives rv up --keep"
pass "rv up --keep: returns once won in ${RUN_SECS}s; allocation $job stays held"

# ---- rv run --in -f: the snapshot, the job's environment and GPUs, once, exit status ----
run ssh_rv run --in "$rid" -f -- python3 eval.py 7
assert_rc 7 "the command's exit status comes back ($RUN_ERR)"
assert_contains "$RUN_OUT" "EVAL cwd=" "eval.py ran"
assert_match "$RUN_OUT" "cwd=[^ ]*/snapshots/[^ ]+/src " "in the snapshot's src/, where rv was started"
assert_contains "$RUN_OUT" "job=$job rid=$rid" "inside the held allocation, with the job's environment"
assert_match "$RUN_OUT" "cvd=[0-9]" "with the job's GPU (CUDA_VISIBLE_DEVICES)"
assert_match "$RUN_OUT" "smi=[1-9]" "nvidia-smi lists it"
assert_match "$RUN_OUT" "hf=/[^ ]+/huggingface" "HF_HOME under the cache root"
assert_eq "1" "$(remote cat "rv-it-in-runs-$rid" | wc -l)" "it ran once"
assert_eq "RUNNING" "$(squeue -h -j "$job" -o %T)" "the allocation goes on after the step"
first_ref="$rid/step-1"
run ssh_rv logs "$first_ref"
assert_rc 0 "rv logs $first_ref"
assert_contains "$RUN_OUT" "EVAL cwd=" "the step's output is kept as its log"
pass "rv run --in -f: snapshot, job env, GPU, ran once, exit 7 returned; rv logs $first_ref"

# Words byte for byte: quotes, $, backticks, newlines.
# shellcheck disable=SC2016  # the words are meant literally
words=(printf '<%s>\n' "it's" '$HOME' 'a  b' 'back`tick`' 'two
lines' 'dq"in' '*')
run ssh_rv run --in "$rid" -f -- "${words[@]}"
assert_rc 0 "printf in the allocation"
# shellcheck disable=SC2016  # expanded in the step, not here
assert_eq "$(printf '<%s>\n' "it's" '$HOME' 'a  b' 'back`tick`' 'two
lines' 'dq"in' '*')" "$RUN_OUT" "the command's words arrive byte for byte"
pass "rv run --in: the command's words arrive byte for byte"

# A secret set after the allocation was won reaches the step, from the request's secrets file.
printf 'tok-%s\n' "$$" | ssh_rv env set IT_IN_TOKEN >/dev/null
# shellcheck disable=SC2016  # expanded in the step, not here
run ssh_rv run --in "$rid" -f -- 'printf "%s\n" "$IT_IN_TOKEN"'
assert_rc 0 "a secret in the step ($RUN_ERR)"
assert_eq "tok-$$" "$RUN_OUT" "rv env secrets reach the step"
assert_not_contains "$(cat "$(record_of "$rid")")" "tok-$$" "the record names the secret, never its value"
ssh_rv env rm IT_IN_TOKEN >/dev/null
pass "rv run --in: the rv env secrets reach the step"

# ---- --time longer than what is left: refused before anything is sent ----
steps_before=$(jq '.steps | length' "$(record_of "$rid")")
run ssh_rv run --in "$rid" --time 2h -f -- python3 eval.py
assert_rc 2 "a --time longer than the allocation has left is a usage error"
assert_contains "$RUN_ERR" "rv: error: --time 2h is longer than the" "one line says so"
assert_contains "$RUN_ERR" "rv: hint: ask for" "with a hint"
assert_eq "$steps_before" "$(jq '.steps | length' "$(record_of "$rid")")" "no step was started"
assert_eq "1" "$(remote cat "rv-it-in-runs-$rid" | wc -l)" "nothing ran"
pass "rv run --in --time 2h on a 10m allocation: refused before anything is sent"
run ssh_rv run --in "$rid" -g 2 -f -- python3 eval.py
assert_rc 2 "a plan flag with --in is a usage error"
assert_contains "$RUN_ERR" "rv: error: rv run --in does not take --gpu" "it names the flag"
run ssh_rv run --one -f -- python3 eval.py
assert_rc 2 "--one without --in"
assert_contains "$RUN_ERR" "--one goes with --in" "says so"
assert_eq "$steps_before" "$(jq '.steps | length' "$(record_of "$rid")")" "still no step"
run ssh_rv --json run --in "$rid" -f -- python3 eval.py 5
assert_rc 5 "--json -f: the command's status"
assert_json .exit_code 5 "one document with the exit code"
assert_json '.stdout | startswith("EVAL cwd=")' true "and the output"
pass "rv run --in: plan flags and a lone --one refused; --json -f: one document"

# ---- two --in at once; rv ps REQ lists them; rv stop REQ/step-N stops that one alone ----
run ssh_rv run --in "$rid" -- 'echo A-STARTED; sleep 300'
assert_rc 0 "a detached step ($RUN_ERR)"
ref_a=$(started_ref)
run ssh_rv run --in "$rid" -- 'echo B-STARTED; sleep 300'
assert_rc 0 "a second one at once ($RUN_ERR)"
ref_b=$(started_ref)
[[ -n $ref_a && -n $ref_b && $ref_a != "$ref_b" ]] || it_fail "two steps, two names: '$ref_a' '$ref_b'"
names=$(step_names "$job")
assert_eq "2" "$(wc -l <<<"$names")" "Slurm runs both steps in job $job ($names)"
run ssh_rv ps "$rid"
assert_rc 0 "rv ps $rid"
assert_match "$RUN_OUT" "step-${ref_a##*-} +running +$job\.[0-9]+" "rv ps lists the first step running"
assert_match "$RUN_OUT" "step-${ref_b##*-} +running +$job\.[0-9]+" "and the second"
assert_match "$RUN_OUT" "step-1 +failed +exit 7" "and the first -f step's exit status"
wait_for 30 bash -c "ssh -F '$TB_SSH_CONFIG' '$TB_HOST' cat \"\$(jq -r '.steps[\"${ref_a##*-}\"].log_base' '$(record_of "$rid")').out\" | grep -q A-STARTED"
run ssh_rv logs "$ref_a"
assert_contains "$RUN_OUT" "A-STARTED" "rv logs of a detached step"
run ssh_rv stop "$ref_a"
assert_rc 0 "rv stop $ref_a"
assert_contains "$RUN_OUT" "stopped $ref_a" "it says so"
wait_for 30 bash -c "! squeue -h --steps -j $job -o %j | grep -qx 'rv-it-in-$$-one.step-${ref_a##*-}'"
assert_eq "$NAME-one.step-${ref_b##*-}" "$(step_names "$job")" "only that step ended"
assert_eq "RUNNING" "$(squeue -h -j "$job" -o %T)" "the allocation goes on"
run ssh_rv ps "$rid"
assert_match "$RUN_OUT" "step-${ref_a##*-} +cancelled" "rv ps shows it cancelled"
assert_match "$RUN_OUT" "step-${ref_b##*-} +running" "and the other still running"
run ssh_rv stop "$ref_b"
assert_rc 0 "rv stop $ref_b"
# rv logs -f REQ/step-N follows a detached step to its end and exits with its status.
run ssh_rv run --in "$rid" -- 'echo D-1; sleep 3; echo D-2; exit 4'
ref_d=$(started_ref)
run ssh_rv logs -f "$ref_d"
assert_rc 4 "rv logs -f $ref_d exits with the step's status ($RUN_ERR)"
assert_eq "D-1
D-2" "$RUN_OUT" "and shows its whole output"
pass "two rv run --in at once: rv ps $rid lists both; rv stop $ref_a stops it alone"

# ---- Ctrl-C on rv run --in -f at a terminal: the step ends, the allocation stays ----
tm new-session -d -x 200 -y 50 -s in "bash --norc --noprofile"
# shellcheck disable=SC2016  # expanded in the step, not here
type_line in "cd $(printf '%q' "$PWD") && $(rv_line run --in "$rid" -f -- 'echo C-$((6*7)); sleep 300'); echo RV-EXIT=\$?"
wait_for 60 screen_has in "C-42"
tm send-keys -t in C-c
wait_for 60 rv_ended in
assert_eq "130" "$(rv_exit in)" "Ctrl-C: rv exits 130 ($(screen in | tail -n 10))"
wait_for 30 bash -c "[[ -z \$(squeue -h --steps -j $job -o %j | grep -F .step-) ]]"
assert_eq "RUNNING" "$(squeue -h -j "$job" -o %T)" "the allocation stays"
run ssh_rv ps "$rid"
assert_match "$RUN_OUT" "step-[0-9]+ +cancelled +exit 130" "the step is recorded cancelled"
pass "Ctrl-C on rv run --in -f: the step ends, allocation $job stays"
run ssh_rv stop "$rid"
assert_rc 0 "rv stop $rid releases the allocation"
wait_for 30 bash -c "[[ -z \$(squeue -h -t PD,R -j $job 2>/dev/null) ]]"
pass "rv stop $rid: the allocation is released"

# ---- a 2-node allocation: one task per node with its rank; --one: one task ----
per_node=$(it_gpus "$IT_PAIR_TYPE")
run ssh_rv up --keep -g $((2 * per_node)) -t "$IT_PAIR_TYPE" --time 10m --name "$NAME-two"
assert_rc 0 "rv up --keep on two nodes ($RUN_ERR)"
rid2=$(it_request_id "$IT_DIR/out")
job2=$(squeue -h -n "$NAME-two" -t R -o %i)
assert_eq "2" "$(squeue -h -j "$job2" -o %D)" "the allocation has two nodes"
run ssh_rv run --in "$rid2" -f -- python3 eval.py 3
assert_rc 3 "the step's exit status ($RUN_ERR)"
assert_match "$RUN_OUT" "0: EVAL cwd=[^ ]*/snapshots/[^ ]+/src job=$job2 rid=$rid2 cvd=[0-9][^ ]* smi=$per_node rank=0 world=2 master=" "node 0: rank 0 of 2, its GPUs"
assert_match "$RUN_OUT" "1: EVAL cwd=[^ ]*/snapshots/[^ ]+/src job=$job2 rid=$rid2 cvd=[0-9][^ ]* smi=$per_node rank=1 world=2 master=" "node 1: rank 1 of 2"
masters=$(grep -o 'master=[^ ]*' "$IT_DIR/out" | sort -u | wc -l)
assert_eq "1" "$masters" "one master for both"
assert_eq "0 1" "$(remote cat "rv-it-in-runs-$rid2" | sort | paste -sd' ')" "once per node"
run ssh_rv run --in "$rid2" --one -f -- python3 eval.py
assert_rc 0 "--one"
assert_eq "1" "$(grep -c 'EVAL' "$IT_DIR/out")" "--one: one task"
run ssh_rv logs "$rid2/step-1" --node 1
assert_contains "$RUN_OUT" "rank=1 world=2" "rv logs --node 1: node 1's log of the step"
ssh_rv stop "$rid2" >/dev/null
pass "a 2-node allocation: one task per node with NODE_RANK, WORLD_SIZE, one MASTER_ADDR; --one runs one"
remote rm -f "rv-it-in-runs-$rid" "rv-it-in-runs-$rid2" || true
