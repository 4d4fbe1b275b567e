#!/usr/bin/env bash
# `rv status` (#14) against an occupied cluster and an association limit, through the loopback
# login node. The test (under the testbed lock) occupies 3 of gpu-a100's 16 GPUs and all 8 of
# gpu-a6000's with plain sbatch jobs of the test user, drains h200-1, submits an rv request that
# runs (v100) and one that waits behind the full a6000 (Resources, with an estimated start),
# sets GrpTRESMins on the account and GrpJobs on the user, and names a quota command in a site
# profile; then checks the numbers rv status prints (text and --json) against Slurm's own. Every
# change to the cluster is undone on exit. About 30 s.
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-status-$$
as_user() { (cd /tmp && runuser -u "$TB_SSH_USER" -- "$@"); }
cleanup_status() {
  local ids
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  scontrol update nodename=h200-1 state=resume 2>/dev/null || true
  sacctmgr -i modify account rvacct set GrpTRESMins=billing=-1 >/dev/null 2>&1 || true
  sacctmgr -i modify user "$TB_SSH_USER" set GrpJobs=-1 >/dev/null 2>&1 || true
}
trap 'cleanup_status; it_cleanup' EXIT
command -v sacctmgr >/dev/null && [[ ${TB_ACCOUNTING:-0} == 1 ]] || {
  printf '%s: SKIP: the testbed has no accounting\n' "$IT_NAME" >&2
  exit 125
}

as_user sbatch -Q -D /tmp -o /dev/null -J "$NAME-a100" -p gpu-a100 --gres=gpu:a100:3 -t 10 --wrap 'sleep 600'
as_user sbatch -Q -D /tmp -o /dev/null -J "$NAME-a6000" -p gpu-a6000 --gres=gpu:a6000:8 -t 10 --wrap 'sleep 600'
scontrol update nodename=h200-1 state=drain reason="$NAME"
sacctmgr -i modify account rvacct set GrpTRESMins=billing=600000 >/dev/null
sacctmgr -i modify user "$TB_SSH_USER" set GrpJobs=40 >/dev/null
run ssh_rv --json run -g 1 -t v100 --time 5m --name "$NAME-run" -- sleep 300
assert_rc 0 "a request that runs"
running_req=$(jq -r .id "$IT_DIR/out")
run ssh_rv --json run -g 1 -t a6000 --time 5m --name "$NAME-wait" -- sleep 300
assert_rc 0 "a request that waits"
waiting_req=$(jq -r .id "$IT_DIR/out")
both_settled() {
  [[ $(squeue -h -n "$NAME-run" -t R -o %i) != "" && $(squeue -h -n "$NAME-wait" -t PD -o %r) == Resources &&
    $(squeue -h -n "$NAME-a100,$NAME-a6000" -t R -o %i | wc -l) == 2 ]]
}
for ((i = 0; i < 300; i++)); do both_settled && break; sleep 0.2; done
both_settled || it_fail "the jobs did not settle (two running, rv's a6000 request pending on Resources)" "$(squeue)"
wait_for 30 bash -c "squeue -h --start -n '$NAME-wait' -o %S | grep -Eq '^[0-9]{4}-'" # backfill's estimate
wait_job=$(squeue -h -n "$NAME-wait" -o %i)
run_job=$(squeue -h -n "$NAME-run" -o %i)

cat >"$IT_DIR/profile.json" <<'JSON'
{"version": 1, "su_per_billing_hour": 0.5, "quota_command": "echo \"home: 1.2G of 50G ($USER)\""}
JSON
export RV_PROFILE=$IT_DIR/profile.json
# The SU of 30 days from sacct's billing x hours x 0.5 (the profile's rate), the test's own sum.
su_sacct() {
  as_user sacct -X -n -P -S now-30days -E now -o AllocTRES,ElapsedRaw | awk -F'|' '
    { b = 0; n = split($1, t, ","); for (i = 1; i <= n; i++) { split(t[i], kv, "="); if (kv[1] == "billing") b = kv[2] }
      su += b * $2 / 3600 * 0.5 } END { printf "%.2f", su }'
}
su_before=$(su_sacct)
run ssh_rv --json status
su_after=$(su_sacct)
assert_rc 0 "rv --json status"
cp "$IT_DIR/out" "$IT_DIR/status.json"
j() { jq -r "$1" "$IT_DIR/status.json"; }

# GPUs: idle/total per partition and type, from GresUsed; the drained node apart.
assert_eq "13/16" "$(j '.gpus.by_partition[] | select(.partition == "gpu-a100") | "\(.idle)/\(.total)"')" "a100: 3 of 16 used"
assert_eq "0/8" "$(j '.gpus.by_partition[] | select(.partition == "gpu-a6000") | "\(.idle)/\(.total)"')" "a6000 full"
assert_eq "3/4" "$(j '.gpus.by_partition[] | select(.partition == "gpu-v100") | "\(.idle)/\(.total)"')" "v100: rv's job"
assert_eq "0/4 4 1" "$(j '.gpus.by_partition[] | select(.partition == "gpu-h200") |
  "\(.idle)/\(.total) \(.unavailable) \(.unavailable_nodes)"')" "h200 drained: counted apart"
assert_eq "13/16 2" "$(j '.gpus.by_type[] | select(.type == "a100") | "\(.idle)/\(.total) \(.nodes)"')" \
  "each a100 node once across partitions"
pass "GPU availability matches the occupied and drained nodes"

assert_eq "RUNNING" "$(j ".requests[] | select(.request == \"$running_req\") | .state")" "the running request"
assert_eq "$run_job" "$(j ".requests[] | select(.request == \"$running_req\") | .job_id")" "with its job"
assert_eq "PENDING Resources" "$(j ".requests[] | select(.request == \"$waiting_req\") | \"\(.state) \(.reason)\"")" \
  "the waiting request and its reason"
assert_eq "waiting for free GPUs" "$(j ".requests[] | select(.request == \"$waiting_req\") | .reason_text")" "in plain words"
assert_eq "$(squeue -h --start -j "$wait_job" -o %S)" \
  "$(j ".requests[] | select(.request == \"$waiting_req\") | .start_estimate")" "Slurm's estimated start"
pass "the active requests with state, reason and estimated start"

assert_eq "600000" "$(j '.limits[] | select(.account == "rvacct" and .user == "" and .limit == "GrpTRESMins" and .tres == "billing") | .max')" "the account's GrpTRESMins"
# The usage as the controller prints it (0 on this testbed: AccountingStorageEnforce=none keeps no
# counts; docs/day.md).
ctl_used=$(as_user scontrol show assoc_mgr users="$TB_SSH_USER" flags=assoc | grep -o 'GrpJobs=40([0-9]*)' | tr -dc 0-9)
assert_eq "40 ${ctl_used#40}" "$(j ".limits[] | select(.user == \"$TB_SSH_USER\" and .limit == \"GrpJobs\") | \"\(.max) \(.used)\"")" \
  "the user's GrpJobs and its usage as the controller counts it"
sshare_fs=$(as_user sshare -P -n -U -o FairShare | head -1)
awk -v a="$(j '.fairshare[0].fair_share')" -v e="$sshare_fs" 'BEGIN { exit !(a == e + 0 && e != "") }' ||
  it_fail "fair-share: rv says $(j '.fairshare[0].fair_share'), sshare prints '$sshare_fs'"
pass "limits with usage (assoc_mgr) and fair-share (sshare)"

# SU of 30 days: billing x hours x 0.5, as sacct has it just before and just after rv status ran
# (the running jobs' SU grows by about 0.5 SU a second here: an estimate after the fact missed).
awk -v a="$(j .su_30d)" -v lo="$su_before" -v hi="$su_after" 'BEGIN { exit !(a >= lo - 0.05 && a <= hi + 0.05) }' ||
  it_fail "SU of 30 days: rv says $(j .su_30d), sacct gives $su_before before and $su_after after"
assert_eq "home: 1.2G of 50G ($TB_SSH_USER)" "$(j '.quota' | head -1)" "the profile's quota command ran on the login node"
pass "SU over 30 days from sacct's billing, and the storage quota"

run ssh_rv status
assert_rc 0 "rv status"
assert_match "$RUN_OUT" "a100 +gpu-a100 +13/16 " "the screen shows the a100 partition"
assert_match "$RUN_OUT" "h200 +gpu-h200 +0/4 .*4 GPU\(s\) on 1 drained/down node\(s\)" "and the drained GPUs"
assert_match "$RUN_OUT" "$waiting_req s1 +$wait_job +PENDING: waiting for free GPUs \(Resources\), est\. start 20" "the waiting job"
assert_match "$RUN_OUT" "$running_req s1 +$run_job +RUNNING on v100-1" "the running job"
assert_match "$RUN_OUT" "account rvacct +GrpTRESMins billing +[0-9.]+ / 600000" "the limit"
assert_contains "$RUN_OUT" "Storage quota:" "the quota"
assert_faster_than 10 "rv status"
pass "the screen shows the same numbers"
