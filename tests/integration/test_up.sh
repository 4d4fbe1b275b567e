#!/usr/bin/env bash
# `rv up` works as `rv run` does (#13), on the real cluster through the loopback sshd:
# `rv up --gpu 4 --run "torchrun --nproc_per_node=4 train.py"` from a project's subdirectory
# syncs and snapshots the project, installs its requirements.txt into the project's venv (a
# stand-in `torchrun` from an offline wheel, as `pip install torch` would put the real one there),
# and runs the command in the snapshot with the job's environment and the secrets; the output and
# the exit code come back exactly. `rv --json up --run` runs the command, prints one document and
# releases the allocation; a --workdir missing on the cluster stops rv before any sbatch. Two short
# allocations; about a minute on an idle cluster.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-up-$$
project_dir=
cleanup_up() {
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  [[ -z $project_dir ]] || remote rm -rf "$project_dir" 2>/dev/null || true
}
trap 'cleanup_up; it_cleanup' EXIT

# ---- --workdir is checked in the round trip before sbatch (#13) ----
run ssh_rv run -f -g 1 --time 5m --name "$NAME-wd" --workdir /nonexistent/rv-it -- true
assert_rc 2 "a --workdir missing on the cluster is a usage error"
assert_contains "$RUN_ERR" "rv: error: --workdir /nonexistent/rv-it: no such directory on" "the error names it"
[[ -z $(squeue -h -t all -n "$NAME-wd" -o %i) ]] || it_fail "a job reached the queue for a missing --workdir" "$(squeue)"
run ssh_rv ps -a
assert_rc 0 "rv ps -a after the refusal"
[[ $RUN_OUT != *"$NAME-wd"* ]] || it_fail "a request that never reached Slurm is listed by rv ps -a (N11)" "$RUN_OUT"
pass "--workdir /nonexistent is refused before any sbatch, and leaves no request behind"

# ---- a project whose requirements.txt provides the launcher ----
mkdir -p "$IT_DIR/proj/wheels" "$IT_DIR/proj/src"
cd "$IT_DIR/proj" || exit 1
python3 - <<'PY'
import zipfile
# The stand-in torchrun: checks the flags rv added, runs the script once per local rank (in rank
# order, so the output is deterministic) with torchrun's variables, exits with the worst status.
torchrun = r'''#!python
import os, subprocess, sys
args = sys.argv[1:]
nproc, port, i = 1, None, 0
while args[i].startswith("-"):
    name, _, value = args[i].partition("=")
    if name == "--nproc_per_node":
        nproc = int(value)
    elif name == "--master_port":
        port = value
    i += 1
if port != os.environ.get("MASTER_PORT"):
    sys.exit("torchrun stand-in: --master_port %r is not MASTER_PORT %r" % (port, os.environ.get("MASTER_PORT")))
worst = 0
for rank in range(nproc):
    env = dict(os.environ, LOCAL_RANK=str(rank), RANK=str(rank), WORLD_SIZE=str(nproc))
    worst = max(worst, subprocess.call([sys.executable] + args[i:], env=env))
sys.exit(worst)
'''
files = {
    "rvfaketorch-0.1.data/scripts/torchrun": torchrun,
    "rvfaketorch-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: rvfaketorch\nVersion: 0.1\n",
    "rvfaketorch-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: rv-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files["rvfaketorch-0.1.dist-info/RECORD"] = "".join(f"{n},,\n" for n in files) + "rvfaketorch-0.1.dist-info/RECORD,,\n"
with zipfile.ZipFile("wheels/rvfaketorch-0.1-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        info = zipfile.ZipInfo(name)
        info.external_attr = 0o100755 << 16  # a regular file, mode 755: pip keeps the bit
        z.writestr(info, text)
PY
printf -- '--no-index\n--find-links ./wheels\nrvfaketorch==0.1\n' >requirements.txt
cat >src/train.py <<'PY'
import os, sys
rank = int(os.environ["LOCAL_RANK"])
if rank == 0:
    print("cwd", os.getcwd())
    for k in ("RV_CHECKPOINT_DIR", "OMP_NUM_THREADS", "MASTER_PORT", "IT_UP_TOKEN", "VIRTUAL_ENV"):
        print(k, os.environ.get(k, "<unset>"))
print("rank %d of %s" % (rank, os.environ["WORLD_SIZE"]))
sys.exit(3)
PY
printf 'tok-%s\n' "$$" | ssh_rv env set IT_UP_TOKEN >/dev/null

# ---- the command the tool is known by, from the project's subdirectory ----
cd src || exit 1
run ssh_rv up --gpu 4 --time 10m --name "$NAME" --run "torchrun --nproc_per_node=4 train.py"
assert_rc 3 "rv up --run returns the command's own status"
assert_contains "$RUN_ERR" "smart execution: torchrun names train.py" "rv syncs for up --run as for run"
rid=$(it_request_id "$IT_DIR/out")
rec=$RV_STATE_DIR/requests/$rid.json
[[ -f $rec ]] || it_fail "no record for request '$rid'" "$(it_last_run)"
snap=$(jq -r .sync.snapshot "$rec")
venv=$(jq -r .sync.venv "$rec")
project_dir=$(jq -r .sync.workspace "$rec")
project_dir=${project_dir%/_default/code}
job_out=$(<"$IT_DIR/out") # stdout is the job's alone (N3)
port=$(sed -n 's/^MASTER_PORT //p' <<<"$job_out")
ckpt=$(sed -n 's/^RV_CHECKPOINT_DIR //p' <<<"$job_out")
omp=$(sed -n 's/^OMP_NUM_THREADS //p' <<<"$job_out")
[[ $port =~ ^[0-9]+$ ]] || it_fail "MASTER_PORT is not a port: '$port'" "$job_out"
assert_match "$ckpt" "/checkpoints/.+/$NAME$" "RV_CHECKPOINT_DIR is the job's checkpoint directory"
cpus=$(jq -r --arg w "$(jq -r .winner "$rec")" '.plan.strategies[] | select(.id == $w) | .cpus_per_task' "$rec")
assert_eq "$((cpus / 4 > 0 ? cpus / 4 : 1))" "$omp" "OMP_NUM_THREADS is the winner's CPUs over 4 local ranks"
expected="cwd $snap/src
RV_CHECKPOINT_DIR $ckpt
OMP_NUM_THREADS $omp
MASTER_PORT $port
IT_UP_TOKEN tok-$$
VIRTUAL_ENV $venv
rank 0 of 4
rank 1 of 4
rank 2 of 4
rank 3 of 4"
assert_eq "$expected" "$job_out" "the script ran 4 ranks in the snapshot's src/ with the job's environment"
assert_eq "$snap/src" "$(jq -r .workdir "$rec")" "the record names the snapshot directory"
assert_eq "done" "$(jq -r .state "$rec")" "the allocation was released"
pass "rv up --gpu 4 --run \"torchrun --nproc_per_node=4 train.py\": synced, ran in the snapshot with the job's environment, exit 3"

# ---- --json: the command runs, one document comes back, the allocation is released ----
# --env: a non-secret variable reaches the job byte for byte (quotes, $, backquotes, newline, UTF-8).
note=$'two words \'q\' "dq" $HOME `id` \\ \nline2 \u00fc'
# shellcheck disable=SC2016  # expanded by the job
run ssh_rv --json up -g 1 --time 5m --name "$NAME-json" --env "IT_UP_NOTE=$note" \
  --run 'printf "a b\n"; printf %s "$IT_UP_NOTE" >&2; exit 5'
assert_rc 5 "rv --json up --run returns the command's status"
assert_eq '5' "$(jq .exit_code <<<"$RUN_OUT")" "exit_code in the document"
assert_eq '"a b\n"' "$(jq .stdout <<<"$RUN_OUT")" "stdout in the document, byte for byte"
# stderr: the variable as the job saw it, and srun's own "task 0: Exited with exit code 5" line:
# before it on Slurm 22.05; after it, or not at all, on 24.11 (docs/slurm-quirks.md), so srun's
# line is taken out and the rest must be exactly the variable's bytes.
shopt -s extglob
step_err=$(jq -r .stderr <<<"$RUN_OUT")
step_err=${step_err//srun: error: +([^:]): task +([0-9]): Exited with exit code +([0-9])$'\n'/}
step_err=${step_err//srun: error: +([^:]): task +([0-9]): Exited with exit code +([0-9])/}
assert_eq "$note" "${step_err: -${#note}}" "--env reached the job byte for byte (stderr in the document)"
assert_eq '"done"' "$(jq .request.state <<<"$RUN_OUT")" "the request is done"
wait_for 30 bash -c "[[ -z \$(squeue -h -t PD,R -n '$NAME-json' -o %i) ]]"
pass "rv --json up --run ran the command, printed one document and released the allocation; --env arrived exactly"
