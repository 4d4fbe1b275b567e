#!/usr/bin/env bash
# One fault campaign per test run (docs/testing.md, "Lanes"): ctest registers the campaign on both
# clusters (integration.fault_campaign, integration24.fault_campaign) and this runs only today's,
# alternating by the day of the year in UTC: odd days cluster 1 (Slurm 22.05), even days cluster 2
# (Slurm 24.11). The other one is skipped, saying which cluster runs it today. RV_FAULT_CLUSTER=1,
# 2 or both overrides the choice (both: the two campaigns, as before #39).
#   tests/fault/today.sh CLUSTER [campaign.sh arguments...]
set -euo pipefail
cluster=$1
shift
today=$(($(date -u +%-j) % 2 == 1 ? 1 : 2))
choice=${RV_FAULT_CLUSTER:-$today}
case $choice in
  1 | 2 | both) ;;
  *) printf 'fault campaign: RV_FAULT_CLUSTER is 1, 2 or both, not %s\n' "$choice" >&2; exit 2 ;;
esac
if [[ $choice != both && $choice != "$cluster" ]]; then
  printf 'fault campaign: SKIP: one campaign per run, on cluster %s today (day %s of the year, UTC);' \
    "$choice" "$(date -u +%-j)" >&2
  printf ' RV_FAULT_CLUSTER=%s or both runs this one\n' "$cluster" >&2
  exit 125
fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/campaign.sh" --cluster "$cluster" "$@"
