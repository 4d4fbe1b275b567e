#!/usr/bin/env bash
# Containers on the real clusters (issue #43): cluster 1 (22.05) offers Apptainer, cluster 2 (24.11)
# Pyxis, both the testbed's own (docs/testbed.md, "Containers": an apptainer whose command really
# runs in the image's root through bubblewrap; a real SPANK plugin that builds the task's root).
# Part 1 proves the runtime by hand, as the user on the login node (srun, no rv): the command runs
# inside the image's root, sees its GPU (one, the one granted), the work directory and the secret
# from the environment, its arguments byte for byte, on one and on two nodes; a missing image fails
# with the runtime's own error; the nogpu image's nvidia-smi finds no device; every call is recorded
# with names of variables, never values. Part 2 does the same through `rv run --container` (SKIP,
# saying so, while rv has no --container). ~40 s per cluster.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# test-clusters: both
# shellcheck disable=SC2016  # single quotes: expanded in the job, not here
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-ctr-$$
if [[ $TB_CLUSTER == "$TB2_CLUSTER" ]]; then RUNTIME=pyxis; else RUNTIME=apptainer; fi
LOG=$TB_DIR/container/$RUNTIME.log
# The runtime stand-ins of the tree under test: the testbed is shared, and another tree's up.sh may
# have installed its own since (an older plugin without --container-name). Under the exclusive lock,
# idempotent, rebuilt only when they differ (testbed/containers.sh).
# shellcheck source=testbed/containers.sh
. "$RV_SOURCE_DIR/testbed/containers.sh"
if [[ $RUNTIME == pyxis ]]; then
  ensure_pyxis_standin "$RV_SOURCE_DIR/testbed" >&2 || it_fail "cannot install this tree's Pyxis stand-in"
else
  ensure_apptainer_standin "$RV_SOURCE_DIR/testbed" >&2
fi
T=$IT_PAIR_TYPE
P=$(it_partition "$T")
read -r N1 N2 <<<"$(it_nodes "$T")"
IMG=docker://rv-test/base:1
q() { printf '%q' "$1"; }
qa() { printf '%q ' "$@"; }

work="" scratch=""
cleanup_jobs() {
  remote "scancel -u $TB_SSH_USER -n $NAME 2>/dev/null; rm -rf $(q "$work") $(q "$scratch")" >/dev/null 2>&1 || true
  local ids
  ids=$(squeue -h -u "$TB_SSH_USER" -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

[[ -f $LOG ]] || it_fail "no $RUNTIME on this cluster: $LOG is missing (testbed/up.sh and up2.sh install the runtimes)"
[[ -z $(sinfo -h -n "$N1,$N2" -t alloc,mix,drain,down -o %n 2>/dev/null) ]] ||
  it_fail "$N1 and $N2 must be idle for this test" "$(sinfo -N -n "$N1,$N2")"
work=$(remote 'mktemp -d ~/.rv-it-ctr-work.XXXXXX')
scratch=$(remote 'mktemp -d /tmp/rv-it-ctr-scratch.XXXXXX')
[[ $work == /* && $scratch == /* ]] || it_fail "cannot make the work and scratch directories on the login node"

secret='tok-'\''sq'\'' "dq" $HOME `id` ;|& end'
secret_sum=$(printf '%s' "$secret" | sha256sum | cut -c1-64)
arg=$'two  spaces\t"dq" \'sq\' $HOME `id` \\ ;|& *'
# What the command prints inside: the image's marker, whose /etc it sees (the image's has no Slurm
# config, every node's has), its GPUs, its cwd, the secret's checksum, its argument.
probe='cat /etc/rv-image | cut -d: -f1
if test -e /etc/slurm/slurm.conf; then echo node-etc; else echo image-etc; fi
nvidia-smi -L | grep -c "^GPU "
pwd
printf "%s" "$RV_IT_SECRET" | sha256sum | cut -c1-64
printf "[%s]\n" "$1"
touch made-inside'
expect_probe() { # expect_probe WHAT: the last run's stdout is the probe's, inside the image
  assert_eq "$(printf '%s\n' rv-test/base image-etc 1 "$work" "$secret_sum" "[$arg]")" "$RUN_OUT" "$1"
  remote "test -f $(q "$work")/made-inside && rm $(q "$work")/made-inside" || it_fail "$1: the file made inside is not in the work directory"
}

# ctr_srun SRUN-ARGS... -- IMAGE CMD...: CMD in IMAGE through this cluster's runtime, as the user on
# the login node, from the work directory, with the secret in the environment.
ctr_srun() {
  local srun_args=() image
  while [[ $1 != -- ]]; do srun_args+=("$1") && shift; done
  shift
  image=$1
  shift
  local line
  if [[ $RUNTIME == apptainer ]]; then
    line=$(qa srun "${srun_args[@]}" apptainer exec --nv --bind "$work,$scratch" --pwd "$work" "$image" "$@")
  else
    line=$(qa srun "${srun_args[@]}" --container-image="$image" --container-mounts="$work:$work,$scratch:$scratch" \
      --container-workdir="$work" "$@")
  fi
  run remote "cd $(q "$work") && export RV_IT_SECRET=$(q "$secret") APPTAINER_CACHEDIR=$(q "$scratch/cache") && $line"
}
gpu1=(-p "$P" --gres="gpu:$T:1" -t 2 -J "$NAME")

# ===== Part 1: the runtime by hand ===============================================================
log_lines0=$(wc -l <"$LOG")
if [[ $RUNTIME == apptainer ]]; then
  run remote 'apptainer --version && singularity --version && apptainer version'
  assert_rc 0 "apptainer --version"
  assert_eq "$(printf 'apptainer version 1.3.6\napptainer version 1.3.6\n1.3.6')" "$RUN_OUT" "apptainer and singularity answer as Apptainer 1.3 does"
  run remote 'apptainer exec --bogus docker://rv-test/base:1 true'
  assert_rc 1 "an unknown flag"
  assert_contains "$RUN_ERR" 'Error for command "exec": unknown flag: --bogus' "the real CLI's error for an unknown flag"
  run remote "apptainer pull $(q "$scratch")/m.sif docker://rv-test/missing:1"
  assert_rc 255 "pulling a missing image"
  assert_eq 1 "$(grep -c '^FATAL: ' <<<"$RUN_ERR")" "one FATAL line"
  assert_contains "$RUN_ERR" "failed to get checksum for docker://rv-test/missing:1: reading manifest 1 in docker.io/rv-test/missing: manifest unknown" \
    "the registry's answer"
  run remote "APPTAINER_CACHEDIR=$(q "$scratch")/cache apptainer pull $(q "$scratch")/base.sif $IMG"
  assert_rc 0 "apptainer pull into a cache on scratch"
  assert_contains "$RUN_ERR" "INFO:    Converting OCI blobs to SIF format" "the pull says what it does"
  run remote "ls $(q "$scratch")/cache/cache/oci-tmp | wc -l; head -c 30 $(q "$scratch")/base.sif"
  assert_eq "$(printf '1\n#!/usr/bin/env run-singularity')" "$RUN_OUT" "one image in APPTAINER_CACHEDIR, the SIF written"
  run remote "apptainer pull $(q "$scratch")/base.sif $IMG"
  assert_rc 255 "pull onto an existing file"
  assert_contains "$RUN_ERR" "will not overwrite" "without --force it refuses"
  run remote "cd $(q "$scratch") && apptainer exec base.sif cat /etc/rv-image && apptainer exec /nonexistent/x.sif true"
  assert_rc 255 "a SIF path that does not exist"
  assert_contains "$RUN_OUT" "rv-test/base" "the pulled SIF runs"
  assert_contains "$RUN_ERR" "FATAL:   could not open image /nonexistent/x.sif: failed to retrieve path for /nonexistent/x.sif: lstat /nonexistent/x.sif: no such file or directory" \
    "a missing SIF is the real error"
  pass "apptainer: --version, an unknown flag, pull (missing, cached on scratch, no overwrite), a SIF path, as the real CLI"
else
  run remote 'srun --help'
  for o in --container-image --container-mounts --container-workdir --container-name --container-env; do
    assert_contains "$RUN_OUT" "$o" "srun --help lists $o (the Pyxis stand-in is loaded)"
  done
  run remote "srun -p $P -t 1 -J $NAME --container-image=$IMG --container-mounts=: true"
  [[ $RUN_RC != 0 ]] || it_fail "srun accepted --container-mounts=:" "$(it_last_run)"
  assert_contains "$RUN_ERR" "pyxis: mount: invalid format" "Pyxis refuses a mount it cannot read"
  pass "pyxis: srun --help lists the five options; a bad --container-mounts is refused"

  # --container-name (pyxis's args.c and pyxis_slurmstepd.c): NAME[:FLAGS]; a named container is made
  # once per node and job (container_scope=job) and reused by the job's later steps, which import
  # nothing; the job's end removes it.
  run remote "srun -p $P -t 1 -J $NAME --container-image=$IMG --container-name=x:bogus true"
  [[ $RUN_RC != 0 ]] || it_fail "srun accepted --container-name=x:bogus" "$(it_last_run)"
  assert_contains "$RUN_ERR" 'pyxis: --container-name: flag must be "auto", "create", "exec" or "no_exec"' "Pyxis's flags"
  named_lines0=$(wc -l <"$LOG")
  run remote "srun -p $P -t 2 -J $NAME -N 1 -n 1 bash -c $(q 'o="--overlap -n 1"
srun $o --container-image='"$IMG"' --container-name=it cat /etc/rv-image | cut -d: -f1
srun $o --container-name=it cut -d: -f1 /etc/rv-image
srun $o --container-image='"$IMG"' --container-name=it:create true 2>&1 | grep -o "container already exists"
srun $o --container-name=other true 2>&1 | grep -o "does not exist, and --container-image is not set"
echo "job=$SLURM_JOB_ID"')"
  assert_rc 0 "steps of one job with a named container"
  named_job=$(sed -n 's/^job=//p' <<<"$RUN_OUT")
  assert_eq "$(printf 'rv-test/base\nrv-test/base\ncontainer already exists\ndoes not exist, and --container-image is not set\njob=%s' "$named_job")" \
    "$RUN_OUT" "the second step reuses the container; :create refuses an existing one; a name without an image must exist"
  named=$(tail -n +"$((named_lines0 + 1))" "$LOG" | jq -c --arg j "$named_job" 'select(.job == $j and .name == "it")')
  assert_eq 1 "$(jq -s 'map(select(.import == "1")) | length' <<<"$named")" "the image is imported once in the job"
  assert_eq 2 "$(jq -s 'map(select(.result == "base")) | length' <<<"$named")" "both steps ran in the named container"
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    left=$(find "$TB_DIR/container/named" -name "pyxis_${named_job}_*" 2>/dev/null)
    [[ -n $left ]] || break
    sleep 0.5
  done
  assert_eq "" "$left" "the job's end removed its named container (container_scope=job)"
  pass "pyxis: --container-name: imported once per job and node, reused by the next step, :create and a missing name refused, removed at the job's end"
fi

# The image's own ENV wins over the job's environment unless the runtime is told otherwise
# (APPTAINERENV_NAME; Pyxis's --container-env=NAME): the env image sets HF_HOME=/data.
if [[ $RUNTIME == apptainer ]]; then
  run remote "export HF_HOME=/job-hf; srun $(qa "${gpu1[@]}") apptainer exec docker://rv-test/env:1 sh -c 'echo \$HF_HOME' &&
    APPTAINERENV_HF_HOME=/job-hf srun $(qa "${gpu1[@]}") apptainer exec docker://rv-test/env:1 sh -c 'echo \$HF_HOME'"
else
  run remote "export HF_HOME=/job-hf; srun $(qa "${gpu1[@]}") --container-image=docker://rv-test/env:1 sh -c 'echo \$HF_HOME' &&
    srun $(qa "${gpu1[@]}") --container-image=docker://rv-test/env:1 --container-env=HF_HOME sh -c 'echo \$HF_HOME'"
fi
assert_rc 0 "the env image"
assert_eq "$(printf '/data\n/job-hf')" "$RUN_OUT" "the image's HF_HOME wins, unless the runtime is told to keep the job's"
pass "$RUNTIME: an image's ENV wins over the job's value; $([[ $RUNTIME == apptainer ]] && echo APPTAINERENV_HF_HOME || echo --container-env=HF_HOME) keeps the job's"

ctr_srun "${gpu1[@]}" -- "$IMG" bash -c "$probe" bash "$arg"
assert_rc 0 "a GPU step in the image"
expect_probe "one GPU in the image: the image's root, its GPU, the work directory, the secret, the argument byte for byte"
pass "$RUNTIME: one node, one GPU: the command runs in the image's root with its GPU, the work directory and the secret"

ctr_srun -N 2 --ntasks-per-node=1 "${gpu1[@]}" -- "$IMG" bash -c 'echo "$SLURM_PROCID $SLURMD_NODENAME $(nvidia-smi -L | grep -c "^GPU ") $(cut -d: -f1 /etc/rv-image)"'
assert_rc 0 "a 2-node step in the image"
assert_eq "$(printf '0 %s 1 rv-test/base\n1 %s 1 rv-test/base' "$N1" "$N2")" "$(sort <<<"$RUN_OUT")" "each rank in the image, one GPU each"
pass "$RUNTIME: two nodes: every rank runs in the image with its GPU"

ctr_srun "${gpu1[@]}" -- docker://rv-test/nogpu:1 nvidia-smi -L
assert_rc 6 "nvidia-smi in the nogpu image"
assert_contains "$RUN_OUT" "No devices were found" "the nogpu image sees no GPU"
pass "$RUNTIME: the nogpu image's nvidia-smi finds no device (exit 6)"

ctr_srun "${gpu1[@]}" -- docker://rv-test/missing:1 true
[[ $RUN_RC != 0 ]] || it_fail "a missing image ran" "$(it_last_run)"
if [[ $RUNTIME == apptainer ]]; then
  assert_contains "$RUN_ERR" "FATAL:   While making image from oci registry: error fetching image to cache: failed to get checksum for docker://rv-test/missing:1" \
    "apptainer's error"
else
  assert_contains "$RUN_ERR" "pyxis: failed to import docker image: docker://rv-test/missing:1" "Pyxis's error"
  assert_contains "$RUN_ERR" "returned error code: 404 Not Found" "enroot's log line"
fi
assert_not_contains "$(remote "ls $(q "$work")")" made-inside "nothing ran"
pass "$RUNTIME: a missing image fails the step with the runtime's own error"

if [[ $RUNTIME == apptainer ]]; then
  run remote "srun $(qa "${gpu1[@]}") apptainer exec $IMG sh -c 'command -v nvidia-smi || echo none; ls /dev | grep -c nvidia'"
  assert_eq "$(printf 'none\n0')" "$RUN_OUT" "without --nv there is no nvidia-smi and no GPU device inside"
  pass "apptainer: without --nv the container has no nvidia-smi"
else
  run remote "srun $(qa "${gpu1[@]}") --container-image=$IMG --container-mounts=/nonexistent-src:/x true"
  [[ $RUN_RC != 0 ]] || it_fail "a mount of a missing source ran" "$(it_last_run)"
  assert_contains "$RUN_ERR" "enroot-mount: failed to mount: /nonexistent-src" "the mount error"
  pass "pyxis: a mount whose source is missing fails the step"
fi

# The record: every call, with the names of the variables set, never their values.
records=$(tail -n +"$((log_lines0 + 1))" "$LOG")
jq -e . >/dev/null <<<"$records" || it_fail "the $RUNTIME log is not JSON lines" "$records"
if [[ $RUNTIME == apptainer ]]; then
  assert_eq true "$(jq -s --arg w "$work" 'any(.[]; .argv[0] == "exec" and (.argv | index("--nv")) != null and (.argv | index("--pwd")) != null and .cwd == $w)' <<<"$records")" \
    "the GPU run is recorded with its argv and cwd"
else
  assert_eq true "$(jq -s --arg w "$work" --arg i "$IMG" 'any(.[]; .image == $i and .workdir == $w and (.mounts | startswith($w + ":" + $w)) and .result == "base")' <<<"$records")" \
    "the GPU step is recorded with its image, mounts and workdir"
  assert_eq true "$(jq -s 'any(.[]; .image == "docker://rv-test/missing:1" and (.result | startswith("failed to import")))' <<<"$records")" \
    "the missing image is recorded with its failure"
fi
assert_eq true "$(jq -s 'any(.[]; (.env | index("RV_IT_SECRET")) != null)' <<<"$records")" "the secret's name is recorded"
assert_not_contains "$records" "tok-" "the secret's value is never recorded"
pass "$RUNTIME: every call recorded (argv or options, cwd, variable names), no secret value"

# ===== Part 2: rv run --container ================================================================
# The help is read whole first: under pipefail, `rv ... | grep -q` fails when grep quits before rv has
# written its 8 KB (SIGPIPE), which skipped part 2 on a binary that has --container.
rv_run_help=$("$RV" run --help 2>&1)
if ! grep -q -- '--container' <<<"$rv_run_help"; then
  printf '%s: part 1 passed (%d checks); SKIP: part 2 (rv run --container): this rv has no --container option yet (issue #43)\n' \
    "$IT_NAME" "$IT_CHECKS" >&2
  exit 125
fi

# A project with a data file (the snapshot) and a secret in rv's store.
mkdir -p "$IT_DIR/proj" && cd "$IT_DIR/proj" || exit 1
git init -q -b main
printf 'snapshot-%s\n' "$$" >data.txt
git add -A && git -c user.email=it@rv -c user.name=it commit -qm init
printf '%s\n' "$secret" | "$RV" env set HF_TOKEN >/dev/null 2>&1 || it_fail "rv env set HF_TOKEN"
rv_probe='cut -d: -f1 /etc/rv-image; if test -e /etc/slurm/slurm.conf; then echo node-etc; else echo image-etc; fi; nvidia-smi -L | grep -c "^GPU "; cat data.txt; printf "%s" "$HF_TOKEN" | sha256sum | cut -c1-64; printf "[%s]\n" '"$(q "$arg")"
log_lines0=$(wc -l <"$LOG")
run ssh_rv run -f -g 1 -t "$T" --time 5m --max-strategies 2 --name "$NAME-one" --container "$IMG" -- "$rv_probe"
assert_rc 0 "rv run -f --container $IMG -g 1"
assert_eq "$(printf '%s\n' rv-test/base image-etc 1 "snapshot-$$" "$secret_sum" "[$arg]")" "$RUN_OUT" \
  "rv's command in the image: its root, one GPU, the snapshot, the secret from the environment, the argument byte for byte"
rid=$(it_request_id "$IT_DIR/out")
rec=$(record_of "$rid")
wd=$(jq -r .workdir "$rec")
job=$(jq -r '[.jobs[] | select(.state == "COMPLETED") | .job_id][0]' "$rec")
records=$(tail -n +"$((log_lines0 + 1))" "$LOG")
if [[ $RUNTIME == apptainer ]]; then
  assert_eq true "$(jq -s --arg j "$job" --arg w "$wd" 'any(.[]; .job == $j and .argv[0] == "exec" and (.argv | index("--nv")) != null and (.argv | index($w)) != null)' <<<"$records")" \
    "rv ran apptainer exec --nv with the work directory"
else
  # The snapshot is under rv's root, which is mounted (a path inside another is mounted with it).
  assert_eq true "$(jq -s --arg j "$job" --arg w "$wd" 'any(.[]; .job == $j and .workdir == $w and (.mounts | split(",") | any(split(":")[0] as $s | $w == $s or ($w | startswith($s + "/")))))' <<<"$records")" \
    "rv's step asked Pyxis for the work directory (mounted itself or with rv's root)"
fi
assert_eq true "$(jq -s --arg j "$job" 'any(.[]; .job == $j and (.env | index("HF_TOKEN")) != null)' <<<"$records")" "the secret reached the runtime by environment"
assert_not_contains "$records" "tok-" "no secret value in any runtime argv"
if [[ $RUNTIME == pyxis ]]; then
  # One import per node and job: the preflight's step makes the job's named container, the command's
  # step reuses it (docs/containers.md).
  assert_eq 1 "$(jq -s --arg j "$job" 'map(select(.job == $j and .import == "1")) | length' <<<"$records")" \
    "the image is imported once in the job (the preflight's step), not again by the command's"
  assert_eq true "$(jq -s --arg j "$job" --arg n "rv-$rid-$job" '[.[] | select(.job == $j)] | length >= 2 and all(.name == $n)' <<<"$records")" \
    "every step of the job names the job's container rv-<request>-<job>"
fi
pass "rv run --container, one node: image root, GPU, snapshot, secret and argument inside ($RUNTIME)"

# The image's own ENV (the env image sets HF_HOME=/data, HF_TOKEN and RV_OUTPUT_DIR) does not win over
# the job's: Apptainer gets APPTAINERENV_ exports, Pyxis --container-env (the stand-in offers it).
run ssh_rv run -f -g 1 -t "$T" --time 5m --max-strategies 2 --name "$NAME-env" --container docker://rv-test/env:1 -- \
  'echo "$HF_HOME"; printf "%s" "$HF_TOKEN" | sha256sum | cut -c1-64; echo "$RV_OUTPUT_DIR"'
assert_rc 0 "rv run --container docker://rv-test/env:1"
rid=$(it_request_id "$IT_DIR/out")
job=$(jq -r '[.jobs[] | select(.state == "COMPLETED") | .job_id][0]' "$(record_of "$rid")")
mapfile -t seen <<<"$RUN_OUT"
[[ ${seen[0]} == /* && ${seen[0]} == */huggingface ]] || it_fail "HF_HOME inside is not the job's (rv's cache): ${seen[0]}" "$(it_last_run)"
assert_eq "$secret_sum" "${seen[1]}" "the secret HF_TOKEN inside is the job's, not the image's"
[[ ${seen[2]} == */"$NAME-env-$job" ]] || it_fail "RV_OUTPUT_DIR inside is not the job's: ${seen[2]}" "$(it_last_run)"
records=$(tail -n +"$((log_lines0 + 1))" "$LOG")
assert_not_contains "$records" "tok-" "no secret value in any runtime argv or record"
assert_not_contains "$RUN_ERR" "tok-" "no secret value in rv's output"
pass "rv run --container: HF_HOME, a secret and RV_OUTPUT_DIR reach the command with the job's values over the image's ENV ($RUNTIME)"

if [[ $RUNTIME == pyxis ]]; then
  # Without the preflight the import is a step of its own before the watchdog, still once per node.
  log_lines1=$(wc -l <"$LOG")
  run ssh_rv run -f -g 1 -t "$T" --time 5m --max-strategies 2 --no-preflight --name "$NAME-nopf" --container "$IMG" -- 'cut -d: -f1 /etc/rv-image'
  assert_rc 0 "rv run --no-preflight --container"
  assert_eq rv-test/base "$RUN_OUT" "the command ran in the image"
  rid=$(it_request_id "$IT_DIR/out")
  job=$(jq -r '[.jobs[] | select(.state == "COMPLETED") | .job_id][0]' "$(record_of "$rid")")
  records=$(tail -n +"$((log_lines1 + 1))" "$LOG")
  assert_eq 1 "$(jq -s --arg j "$job" 'map(select(.job == $j and .import == "1")) | length' <<<"$records")" \
    "one import without the preflight too"
  assert_eq 2 "$(jq -s --arg j "$job" 'map(select(.job == $j)) | length' <<<"$records")" "the import's step, then the command's"
  run remote "cat ~/.rv/logs/$NAME-nopf-$job.err"
  assert_contains "$RUN_OUT" "an import step of its own: the preflight is off" "the import is its own phase"
  assert_contains "$RUN_OUT" "image ready in " "the import's time is shown"
  pass "rv run --no-preflight --container: Pyxis imports in a step of its own, once, before the command's step"
fi

run ssh_rv run -f -g 2 --nodes 2 -t "$T" --time 5m --max-strategies 2 --name "$NAME-two" --container "$IMG" -- \
  'echo "rank=$NODE_RANK $(cut -d: -f1 /etc/rv-image) gpus=$(nvidia-smi -L | grep -c "^GPU ")"'
assert_rc 0 "rv run -f --container on 2 nodes"
rid=$(it_request_id "$IT_DIR/out")
job=$(jq -r '[.jobs[] | select(.state == "COMPLETED") | .job_id][0]' "$(record_of "$rid")")
# Each node's output is its own log (docs/templates.md).
run remote "cat ~/.rv/logs/$NAME-two-$job.node0.out ~/.rv/logs/$NAME-two-$job.node1.out"
assert_eq "$(printf 'rank=0 rv-test/base gpus=1\nrank=1 rv-test/base gpus=1')" "$RUN_OUT" "each rank in the image with its GPU"
if [[ $RUNTIME == pyxis ]]; then
  # Pyxis names are per node: every rank's step names the same container, imported once on each node.
  records=$(tail -n +"$((log_lines0 + 1))" "$LOG")
  assert_eq "2 2" "$(jq -s -r --arg j "$job" 'map(select(.job == $j and .import == "1") | .node) | "\(length) \(unique | length)"' <<<"$records")" \
    "one import on each of the two nodes, none by the ranks' step"
fi
pass "rv run --container, two nodes: every rank in the image, NODE_RANK intact ($RUNTIME)"

run ssh_rv run -f -g 1 -t "$T" --time 5m --max-strategies 2 --name "$NAME-missing" --container docker://rv-test/missing:1 -- true
[[ $RUN_RC != 0 ]] || it_fail "rv ran a missing image" "$(it_last_run)"
assert_faster_than 90 "a missing image fails the request at once"
assert_not_contains "$RUN_ERR" "retrying without" "no re-race: every node would fail it"
if [[ $RUNTIME == apptainer ]]; then want="manifest unknown"; else want="failed to import docker image"; fi
# One line (docs/containers.md, "The image phase"): the request-wide FAIL line with the runtime's words.
grep -- "^rv preflight: FAIL node=.* scope=request reason=" <<<"$RUN_ERR" | grep -q -- "$want" ||
  it_fail "no one-line request-wide failure with the runtime's error ($want)" "$(it_last_run)"
pass "rv run --container with a missing image: fails at once with the runtime's error in one line ($RUNTIME)"

run ssh_rv run -f -g 1 -t "$T" --time 5m --max-strategies 2 --name "$NAME-nogpu" --container docker://rv-test/nogpu:1 -- 'echo user-command-ran'
[[ $RUN_RC != 0 ]] || it_fail "rv ran in a container that sees no GPU" "$(it_last_run)"
assert_not_contains "$RUN_OUT" "user-command-ran" "the user's command never ran"
assert_contains "$RUN_ERR" "failed the preflight" "the preflight caught it, as a node failure"
grep -- "^rv preflight: FAIL node=" <<<"$RUN_ERR" | grep -v -- "scope=request" | grep -q -- "No devices were found" ||
  it_fail "no node failure line with nvidia-smi's words inside the container" "$(it_last_run)"
rid=$(it_request_id "$IT_DIR/out")
job=$(jq -r '.jobs[0].job_id' "$(record_of "$rid")")
run ssh_rv exec scontrol show job "$job"
assert_contains "$RUN_OUT" "ExitCode=96:0" "the job exited 96"
pass "rv run --container with an image that sees no GPU: the preflight fails it (exit 96) before the user's code ($RUNTIME)"
