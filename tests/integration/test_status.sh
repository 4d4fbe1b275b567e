#!/usr/bin/env bash
# `rv status` (#14) against an occupied cluster and an association limit, through the loopback
# login node. The test (under the testbed lock) occupies 3 GPUs of the two-node type (a100's 16;
# h100's 8 on cluster 2) and all of the one-node type (a6000's 8; l40s's 2) with plain sbatch jobs
# of the test user, drains a node (h200-1; mig-1), submits an rv request that runs (v100; h100)
# and one that waits behind the full one-node type (Resources, with an estimated start), sets
# GrpTRESMins on the account and GrpJobs on the user, and names a quota command in a site
# profile; then checks the numbers rv status prints (text and --json) against Slurm's own. Every
# change to the cluster is undone on exit. About 30 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-status-$$
as_user() { (cd /tmp && tb_as_user "$@"); }
# The scene's types and nodes: the shape's roles (tests/integration/lib.sh), and per cluster the
# type rv's running request gets and the node drained (cluster 2 has no type left over for both).
PAIR_T=$IT_PAIR_TYPE PAIR_P=$(it_partition "$IT_PAIR_TYPE") PAIR_TOTAL=$((2 * $(it_gpus "$IT_PAIR_TYPE")))
SOLO_T=$IT_SOLO_TYPE SOLO_P=$(it_partition "$IT_SOLO_TYPE") SOLO_G=$(it_gpus "$IT_SOLO_TYPE")
if [[ $TB_CLUSTER == "$TB2_CLUSTER" ]]; then
  RUN_T=$PAIR_T DRAIN_T=h100_3g.40gb
else
  RUN_T=v100 DRAIN_T=h200
fi
RUN_P=$(it_partition "$RUN_T") RUN_G=$(it_gpus "$RUN_T") RUN_NODES=$(it_nodes "$RUN_T")
DRAIN_NODE=$(it_nodes "$DRAIN_T") DRAIN_P=$(it_partition "$DRAIN_T") DRAIN_G=$(it_gpus "$DRAIN_T")
PAIR_IDLE=$((PAIR_TOTAL - 3))
[[ $RUN_T != "$PAIR_T" ]] || PAIR_IDLE=$((PAIR_IDLE - 1)) # rv's running job is there too
cleanup_status() {
  local ids
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  scontrol update nodename="$DRAIN_NODE" state=resume 2>/dev/null || true
  sacctmgr -i modify account rvacct set GrpTRESMins=billing=-1 >/dev/null 2>&1 || true
  sacctmgr -i modify user "$TB_SSH_USER" set GrpJobs=-1 >/dev/null 2>&1 || true
}
trap 'cleanup_status; it_cleanup' EXIT
command -v sacctmgr >/dev/null && [[ ${TB_ACCOUNTING:-0} == 1 ]] || {
  printf '%s: SKIP: the testbed has no accounting\n' "$IT_NAME" >&2
  exit 125
}

as_user sbatch -Q -D /tmp -o /dev/null -J "$NAME-pair" -p "$PAIR_P" --gres="gpu:$PAIR_T:3" -t 10 --wrap 'sleep 600'
as_user sbatch -Q -D /tmp -o /dev/null -J "$NAME-solo" -p "$SOLO_P" --gres="gpu:$SOLO_T:$SOLO_G" -t 10 --wrap 'sleep 600'
scontrol update nodename="$DRAIN_NODE" state=drain reason="$NAME"
sacctmgr -i modify account rvacct set GrpTRESMins=billing=600000 >/dev/null
sacctmgr -i modify user "$TB_SSH_USER" set GrpJobs=40 >/dev/null
run ssh_rv --json run -g 1 -t "$RUN_T" --time 5m --name "$NAME-run" -- sleep 300
assert_rc 0 "a request that runs"
running_req=$(jq -r .id "$IT_DIR/out")
# 45 minutes: longer than cluster 2's debug partition allows, where l40s-1 is too (one job only).
run ssh_rv --json run -g 1 -t "$SOLO_T" --time 45m --name "$NAME-wait" -- sleep 300
assert_rc 0 "a request that waits"
waiting_req=$(jq -r .id "$IT_DIR/out")
both_settled() {
  [[ $(squeue -h -n "$NAME-run" -t R -o %i) != "" && $(squeue -h -n "$NAME-wait" -t PD -o %r) == Resources &&
    $(squeue -h -n "$NAME-pair,$NAME-solo" -t R -o %i | wc -l) == 2 ]]
}
for ((i = 0; i < 300; i++)); do both_settled && break; sleep 0.2; done
both_settled || it_fail "the jobs did not settle (two running, rv's $SOLO_T request pending on Resources)" "$(squeue)"
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
# Fair-share moves when the controller's priority calculation runs (on a fresh cluster the first
# one turns 1 into the real value): read before and after rv status, like the SU.
fs_sshare() { as_user sshare -P -n -U -o FairShare | head -1; }
fs_before=$(fs_sshare)
run ssh_rv --json status
fs_after=$(fs_sshare)
su_after=$(su_sacct)
assert_rc 0 "rv --json status"
cp "$IT_DIR/out" "$IT_DIR/status.json"
j() { jq -r "$1" "$IT_DIR/status.json"; }

# GPUs: idle/total per partition and type, from GresUsed; the drained node apart.
idle_of() { j ".gpus.by_partition[] | select(.partition == \"$1\") | \"\\(.idle)/\\(.total)\""; }
assert_eq "$PAIR_IDLE/$PAIR_TOTAL" "$(idle_of "$PAIR_P")" "$PAIR_T: 3 of $PAIR_TOTAL used (and rv's job if there)"
assert_eq "0/$SOLO_G" "$(idle_of "$SOLO_P")" "$SOLO_T full"
[[ $RUN_T == "$PAIR_T" ]] || assert_eq "$((RUN_G - 1))/$RUN_G" "$(idle_of "$RUN_P")" "$RUN_T: rv's job"
assert_eq "0/$DRAIN_G $DRAIN_G 1" "$(j ".gpus.by_partition[] | select(.partition == \"$DRAIN_P\") |
  \"\\(.idle)/\\(.total) \\(.unavailable) \\(.unavailable_nodes)\"")" "$DRAIN_P drained: counted apart"
assert_eq "$PAIR_IDLE/$PAIR_TOTAL 2" "$(j ".gpus.by_type[] | select(.type == \"$PAIR_T\") | \"\\(.idle)/\\(.total) \\(.nodes)\"")" \
  "each $PAIR_T node once across partitions"
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
awk -v a="$(j '.fairshare[0].fair_share')" -v b="$fs_before" -v e="$fs_after" \
  'BEGIN { exit !((a == b + 0 && b != "") || (a == e + 0 && e != "")) }' ||
  it_fail "fair-share: rv says $(j '.fairshare[0].fair_share'), sshare printed '$fs_before' before and '$fs_after' after"
pass "limits with usage (assoc_mgr) and fair-share (sshare)"

# SU of 30 days: billing x hours x 0.5, as sacct has it just before and just after rv status ran
# (the running jobs' SU grows by about 0.5 SU a second here: an estimate after the fact missed).
awk -v a="$(j .su_30d)" -v lo="$su_before" -v hi="$su_after" 'BEGIN { exit !(a >= lo - 0.05 && a <= hi + 0.05) }' ||
  it_fail "SU of 30 days: rv says $(j .su_30d), sacct gives $su_before before and $su_after after"
assert_eq "home: 1.2G of 50G ($TB_SSH_USER)" "$(j '.quota' | head -1)" "the profile's quota command ran on the login node"
pass "SU over 30 days from sacct's billing, and the storage quota"

run ssh_rv status
assert_rc 0 "rv status"
assert_match "$RUN_OUT" "$PAIR_T +$PAIR_P +$PAIR_IDLE/$PAIR_TOTAL " "the screen shows the $PAIR_T partition"
assert_match "$RUN_OUT" "$DRAIN_T +$DRAIN_P +0/$DRAIN_G .*$DRAIN_G GPU\(s\) on 1 drained/down node\(s\)" "and the drained GPUs"
assert_match "$RUN_OUT" "$waiting_req s1 +$wait_job +PENDING: waiting for free GPUs \(Resources\), est\. start 20" "the waiting job"
assert_match "$RUN_OUT" "$running_req s1 +$run_job +RUNNING on (${RUN_NODES// /|})" "the running job"
assert_match "$RUN_OUT" "account rvacct +GrpTRESMins billing +[0-9.]+ / 600000" "the limit"
assert_contains "$RUN_OUT" "Storage quota:" "the quota"
assert_faster_than 10 "rv status"
pass "the screen shows the same numbers"
