#!/usr/bin/env bash
# `rv doctor` on the real cluster: every check passes on the healthy testbed; an injected fault is
# named with its fix: a GPU invisible in the job (the stand-in nvidia-smi's fault=nodevices on
# v100-1), and rsync missing on the login node (rv doctor run locally with a PATH without rsync).
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
ssh_rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
if [[ $TB_CLUSTER == rvtest2 ]]; then # Slurm 24.11 (integration24.test_doctor)
  P=ada NODE=l40s-1 QOS="normal, rvlimit"
else
  P=gpu-v100 NODE=v100-1 QOS=normal
fi
fault=$TB_DIR/gpu/$NODE/fault
restore() {
  rm -f "$fault" # the testbed has no fault file by default
  ssh_rv exec scancel -u rvtest -n rv-doctor >/dev/null 2>&1 || true
}
trap 'restore; it_cleanup' EXIT

run ssh_rv --json doctor --quick
assert_rc 0 "a healthy testbed passes"
assert_json '[.checks[].name]' \
  '["ssh.reach","ssh.host_key","ssh.auth","slurm.commands","slurm.version","slurm.associations","slurm.partitions","workspace.writable","workspace.quota","login.python3","login.rsync","containers","job.start","job.gpu","job.devices","job.container"]' \
  "the checks, in order"
assert_json '[.checks[] | select(.status == "fail")] | length' '0' "nothing fails"
assert_json '.checks[] | select(.name == "slurm.version") | .detail' "\"Slurm $TB_SLURM_VERSION\"" "the Slurm version"
assert_json '.checks[] | select(.name == "slurm.associations") | .detail' "\"rvtest: account rvacct; QOS $QOS\"" \
  "the association"
assert_json '.checks[] | select(.name == "job.gpu") | .status' '"skip"' "--quick skips the job"
pass "rv doctor --quick: every login-node check passes"

run ssh_rv --json doctor --quick -p nosuchpart
assert_rc 1 "a -p the cluster does not have fails, --quick or not"
assert_json '.checks[] | select(.name == "slurm.partitions") | .detail' \
  '"--partition nosuchpart: the cluster has no such partition"' "slurm.partitions names it"
pass "rv doctor --quick -p nosuchpart fails slurm.partitions (it used to exit 0)"

run ssh_rv --json doctor -p "$P"
assert_rc 0 "the GPU job passes on a healthy node"
assert_json '.checks[] | select(.name == "job.gpu") | .detail' \
  "\"$NODE: 1/1 GPU(s) visible/granted, driver 535.104.05, CUDA_VISIBLE_DEVICES=0\"" "what the job saw"
pass "rv doctor's test job sees its GPU"

echo nodevices >"$fault"
run ssh_rv doctor -p "$P"
assert_rc 1 "a failed check exits 1"
assert_contains "$RUN_OUT" "fail  job.gpu             $NODE: nvidia-smi: No devices were found" "the fault is named"
assert_contains "$RUN_OUT" "fix: the job cannot see the GPUs Slurm granted it" "with its fix"
rm -f "$fault"
pass "rv doctor names a GPU invisible in the job"

# rsync missing on the login node: rv doctor runs the login checks on this machine (no --host)
# with a PATH that has everything of /usr/bin and /bin but rsync.
mkdir -p "$IT_DIR/bin"
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
  name=${f##*/}
  [[ $name == rsync || -e $IT_DIR/bin/$name ]] || ln -s "$f" "$IT_DIR/bin/$name"
done
run env PATH="$IT_DIR/bin" RV_REMOTE_ROOT="$IT_DIR/rvroot" "$RV" --json doctor --quick
assert_json '.checks[] | select(.name == "login.rsync") | .status' '"warn"' "a missing rsync is a warning"
assert_json '.checks[] | select(.name == "login.rsync") | .detail' \
  '"no rsync on the login node: rv syncs over SFTP (slower, no delta transfer)"' "rsync missing is named"
assert_json '.checks[] | select(.name == "ssh.reach") | .status' '"skip"' "no ssh when local"
run env PATH="$IT_DIR/bin" RV_REMOTE_ROOT="$IT_DIR/rvroot" RV_SYNC_TRANSPORT=rsync "$RV" doctor --quick
assert_rc 1 "with sync_transport rsync it fails"
assert_contains "$RUN_OUT" "fail  login.rsync" "named as a failure"
pass "rv doctor names rsync missing on the login node"
