#!/usr/bin/env bash
# `rv gpu` and the GPU watchdog (#14, #16) on the real cluster through the loopback sshd, with the
# testbed's stand-in nvidia-smi (docs/testbed.md): `rv gpu` shows the utilisation, memory,
# temperature and processes the test sets for the job's node, as a table and as JSON; a job whose
# GPUs stay at 0 % is reported idle by `rv ps`; with --idle-timeout it ends itself with exit 95,
# while a job whose GPUs the test keeps busy runs to its end. The watchdog samples every 2 s here
# (config watchdog_interval). A 2-node job at 0 % with a silent log ends with 94 (hang); `rv up`
# warns in its log, then exits 95. The stand-in's state is put back afterwards. The GPUs are the
# two-node type's (IT_PAIR_TYPE: a100, h100 on cluster 2). About 80 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
export RV_WATCHDOG_INTERVAL=2s
NAME=rv-it-gpu-$$
T=$IT_PAIR_TYPE
read -r -a NODES <<<"$(it_nodes "$T")"
IFS='|' read -r GPU_NAME GPU_MIB _ <<<"$(tb_gpu_model "$T")"
ALL_GPUS=$((2 * $(it_gpus "$T"))) # both nodes, every GPU
FILES=(util mem_used temp apps)
saved=$IT_DIR/saved-gpu
mkdir -p "$saved"
for n in "${NODES[@]}"; do
  mkdir -p "$saved/$n"
  for f in "${FILES[@]}"; do [[ -e $TB_DIR/gpu/$n/$f ]] && cp -p "$TB_DIR/gpu/$n/$f" "$saved/$n/$f"; done
done
restore_gpus() {
  local n f
  for n in "${NODES[@]}"; do
    for f in "${FILES[@]}"; do
      rm -f "$TB_DIR/gpu/$n/$f"
      [[ -e $saved/$n/$f ]] && cp -p "$saved/$n/$f" "$TB_DIR/gpu/$n/$f"
    done
  done
  return 0
}
set_gpus() { # set_gpus FILE VALUE: on both nodes
  local n
  for n in "${NODES[@]}"; do printf '%s\n' "$2" >"$TB_DIR/gpu/$n/$1"; done
}
clear_gpus() {
  local n f
  for n in "${NODES[@]}"; do for f in "${FILES[@]}"; do rm -f "$TB_DIR/gpu/$n/$f"; done; done
}
cleanup_gpu() {
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  restore_gpus
}
trap 'cleanup_gpu; it_cleanup' EXIT
running() { [[ $(squeue -h -u rvtest -n "$1" -t RUNNING -o %i | wc -l) -ge 1 ]]; }
request_of() { jq -r '.id' "$IT_DIR/out"; }

# ---- rv gpu: the values the test set, on the job's node ----
clear_gpus
set_gpus util 37
set_gpus mem_used 1234
set_gpus temp 55
set_gpus apps '0|4242|python|1200'
run ssh_rv --json run -t "$T" -g 2 --time 5m --name "$NAME-show" -- sleep 300
assert_rc 0 "rv run submits"
req=$(request_of)
wait_for 60 running "$NAME-show"
run ssh_rv gpu
assert_rc 0 "rv gpu on the newest running request"
assert_contains "$RUN_OUT" "request $req" "rv gpu picks the newest running request"
assert_match "$RUN_OUT" "(${NODES[0]}|${NODES[1]}) +0  $GPU_NAME +37%  +1234/$GPU_MIB MiB  +55C  4242 python \(1200 MiB\)" \
  "GPU 0's row shows the stand-in's values"
assert_match "$RUN_OUT" "(${NODES[0]}|${NODES[1]}) +1  $GPU_NAME +37%" "the job's second GPU is shown"
pass "rv gpu shows node, GPU, name, utilisation, memory, temperature and processes: $(sed -n 3p "$IT_DIR/out")"
run ssh_rv --json gpu "$req"
assert_rc 0 "rv --json gpu REQUEST"
assert_json '[.request, (.nodes | length), (.nodes[0].gpus | length), .nodes[0].gpus[0].util_pct, .nodes[0].gpus[1].mem_used_mib, .nodes[0].gpus[0].temp_c, .nodes[0].processes[0].pid, .nodes[0].processes[0].gpu_index, .nodes[0].error]' \
  "[\"$req\",1,2,37,1234,55,4242,0,null]" "the JSON document"
pass "rv --json gpu has the documented shape"
run ssh_rv gpu "$req" --node 3
assert_rc 2 "--node past the job's nodes"
assert_contains "$RUN_ERR" "--node 3: job" "the error names the job's nodes"
ssh_rv stop "$req" >/dev/null 2>&1
run ssh_rv gpu "$req"
assert_rc 2 "rv gpu on an ended request"
assert_contains "$RUN_ERR" "has ended" "the error says the request ended"
pass "rv gpu: clear errors for --node out of range and an ended request"

# ---- --idle-timeout: a busy job runs to its end ----
clear_gpus
set_gpus util 50
run ssh_rv run -f -t "$T" -g 1 --time 5m --idle-timeout 6s --name "$NAME-busy" -- 'sleep 16; echo busy-done'
assert_rc 0 "a job with busy GPUs is not ended by --idle-timeout 6s"
assert_contains "$RUN_OUT" "busy-done" "its command ran to the end"
pass "--idle-timeout 6s leaves a job at 50 % alone for 16 s"

# ---- idle: rv ps says so; --idle-timeout ends the job with exit 95 ----
clear_gpus # every GPU at 0 %
run ssh_rv --json run -t "$T" -g 1 --time 5m --name "$NAME-idle" -- sleep 300
assert_rc 0 "the idle job is submitted"
idle_req=$(request_of)
wait_for 60 running "$NAME-idle"
# shellcheck disable=SC2317  # called through wait_for
ps_says_idle() { ssh_rv ps | grep -E "idle [0-9]+s" >"$IT_DIR/ps_idle"; }
wait_for 60 ps_says_idle
pass "rv ps reports the idle job: $(sed 's/  */ /g' "$IT_DIR/ps_idle")"
run ssh_rv --json ps
assert_json "[.[] | select(.id == \"$idle_req\") | .watchdog.idle_s >= 10]" "[true]" "rv --json ps has the watchdog verdict"
ssh_rv stop "$idle_req" >/dev/null 2>&1
pass "rv --json ps: watchdog.idle_s"

start=$SECONDS
run ssh_rv run -f -t "$T" -g 1 --time 5m --idle-timeout 10s --name "$NAME-kill" -- 'sleep 300; echo never'
assert_rc 95 "an idle job with --idle-timeout 10s ends with exit 95"
assert_contains "$RUN_OUT$RUN_ERR" "rv: watchdog: every GPU at 0 % for" "the log says why"
assert_not_contains "$RUN_OUT" "never" "the command did not run to its end"
((SECONDS - start < 100)) || it_fail "the idle job took $((SECONDS - start)) s to end"
pass "--idle-timeout 10s ended an idle job with exit 95 after $((SECONDS - start)) s"

# ---- a 2-node job at 0 % whose log stands still is a hang: exit 94 ----
run ssh_rv run -f -t "$T" -g "$ALL_GPUS" --time 5m --idle-timeout 10s --name "$NAME-hang" -- 'sleep 300'
assert_rc 94 "a flat 2-node job with --idle-timeout 10s ends with exit 94"
assert_contains "$RUN_OUT$RUN_ERR" "rv: watchdog: hang? the log and every GPU of every node unchanged" "the log says why"
pass "--idle-timeout on a flat 2-node job: exit 94 (hang)"

# ---- rv up: the warning in the log at 80 %, then the allocation ends and rv up exits 95 ----
run ssh_rv up -t "$T" -g 1 --time 5m --idle-timeout 8s --name "$NAME-up" --run 'sleep 100; echo never'
assert_rc 95 "rv up --idle-timeout 8s exits 95 when the watchdog ends the allocation"
assert_contains "$RUN_ERR" "the watchdog ended allocation" "rv up says so"
up_job=$(sacct -n -X -P -o JobID,JobName -S now-10minutes | awk -F'|' -v n="$NAME-up" '$2 == n { id = $1 } END { print id }')
[[ -z $up_job ]] || assert_contains "$(cat "${TB_ROOT:-}/home/$TB_SSH_USER/.rv/logs/$NAME-up-$up_job.err" 2>/dev/null)" \
  "rv: watchdog warning: every GPU has been at 0 %" "the allocation's log has the warning first"
pass "rv up --idle-timeout: warning in the log, then exit 95"
echo "test_gpu: all $IT_CHECKS checks passed"
