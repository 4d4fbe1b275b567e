#!/usr/bin/env bash
# Find the rule by which Slurm's backfill sizes the window in front of a reservation, on the local
# clusters (docs/slurm-quirks.md, "The window in front of a reservation"): on each node of a
# series, a running `hold` job (limit H min) and a high-priority `blocker` that needs the whole
# node, so backfill reserves the node from the hold's end R; then, one after another, a probe job
# of L minutes (or --time 30 --time-min L) submitted DELTA s before R - L*60, i.e. with a window of
# W = L*60 + DELTA s, for DELTA in 90 60 45 30 10 -10; each probe is watched for 8 s (4 backfill
# cycles at bf_interval=2) and cancelled. The hold is started at a chosen second of the minute
# (its PHASE), so R lies PHASE s past bf_resolution's 60 s grid.
# Before each probe the queue is captured as rv reads it (date, squeue, scontrol show node), so
# the unit tests replay the window model on exactly what it would have seen
# (tests/unit/strategy/test_backfill_rule.cpp).
#   bash testbed/capture_backfill_rule.sh [--clusters "1 2"] [--out-root DIR]
# Out: <out-root>/<version>/backfill_rule/{results.tsv,README.md,scheduler.txt,
# scontrol_show_partition.txt,cases/*} (default out-root tests/data/slurm). Takes the testbed
# lock unless RV_TESTBED_LOCKED=1; needs the series' nodes idle; cancels every job it made.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
clusters="1"
out_root=$here/../tests/data/slurm
while (($#)); do
  case $1 in
    --clusters) clusters=$2; shift ;;
    --out-root) out_root=$2; shift ;;
    *) tb_die "unknown option $1" ;;
  esac
  shift
done
if [[ ${RV_TESTBED_LOCKED:-0} != 1 ]]; then
  exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
  flock -w 2400 9 || tb_die "the testbed lock stayed taken"
fi
deltas=(90 60 45 30 10 -10)
# shellcheck disable=SC2034  # read through a name reference (run_cluster)
# Series per cluster: node partition gpu-type hold-gpus probe-gpus node-gpus L(min) time-min(0|1) phase(s)
series_1=(
  "a6000-1 gpu-a6000 a6000 4 4 8 2 0 5"
  "a100-1 gpu-a100 a100 4 4 8 2 0 45"
  "v100-1 gpu-v100 v100 2 2 4 1 0 25"
  "h200-1 gpu-h200 h200 2 2 4 2 1 5"
  "a100-2 gpu-a100 a100 4 4 8 2 1 45"
  "mig-1 gpu-mig a100_1g.10gb 3 4 7 1 1 15"
)
# shellcheck disable=SC2034
series_2=(
  "h100-1 hopper h100 2 2 4 2 0 5"
  "h100-2 hopper h100 2 2 4 2 0 45"
  "l40s-1 ada l40s 1 1 2 1 1 25"
  "mig-1 mig h100_3g.40gb 1 1 2 3 1 35"
)
ids=$(mktemp)
cleanup() {
  local c
  for c in $clusters; do
    # shellcheck disable=SC2046  # one word per job id
    [[ ! -s $ids.$c ]] || (cluster_env "$c" && scancel $(cat "$ids.$c") 2>/dev/null) || true
    rm -f "$ids.$c"
  done
  rm -f "$ids"
}
trap cleanup EXIT
cluster_env() {
  if [[ $1 == 2 ]]; then
    # Without cluster 2 its commands would reach cluster 1 (and its captures overwrite cluster 1's).
    [[ -x ${TB2_DIR:-/tmp/rv-testbed2}/bin/sinfo ]] || tb_die "cluster 2 is not up (bash testbed/up.sh --clusters 2)"
    PATH=${TB2_DIR:-/tmp/rv-testbed2}/bin:$PATH
  fi
}
now() { date +%s.%N; }
sleep_until() {
  local d
  d=$(awk -v t="$1" -v n="$(now)" 'BEGIN { d = t - n; print (d > 0 ? d : 0) }')
  sleep "$d"
}
submit() { # cluster args...
  local c=$1 j
  shift
  j=$(sbatch --parsable -o /dev/null --wrap 'sleep 3000' "$@" | cut -d';' -f1)
  echo "$j" >>"$ids.$c"
  echo "$j"
}
field() { SLURM_TIME_FORMAT=%s squeue -h -t all -j "$1" -o "$2" 2>/dev/null; }
is_running() { [[ $(field "$1" %T) == RUNNING ]]; }
has_start() { [[ $(field "$1" %S) =~ ^[0-9]+$ ]]; }
gone() { [[ -z $(squeue -h -j "$1" -t PD,R,CG -o %i 2>/dev/null) ]]; }

# One series on one node; prints one results line per probe.
run_series() {
  local c=$1 node part type hold_g probe_g node_g L tmin phase
  read -r node part type hold_g probe_g node_g L tmin phase <<<"$2"
  local dir=$3 name
  name=$node-L$L-p$phase
  [[ $tmin == 0 ]] || name=$node-L${L}tmin-p$phase
  cluster_env "$c"
  local H=$((L + 3))
  # Start the hold at PHASE s past a minute (the main scheduler starts it within the second).
  sleep_until "$(awk -v n="$(now)" -v p="$phase" 'BEGIN { m = int(n / 60) * 60 + p; if (m < n + 1) m += 60; print m }')"
  local hold blocker R
  hold=$(submit "$c" -p "$part" -w "$node" --gres="gpu:$type:$hold_g" -c 1 --mem=1G -t "$H" -J "bfr-hold-$node")
  tb_wait 20 is_running "$hold" || tb_die "$name: hold $hold did not start"
  R=$(field "$hold" %e)
  blocker=$(submit "$c" -p "$part" -w "$node" --gres="gpu:$type:$node_g" -c 1 --mem=1G -t 30 -J "bfr-blk-$node" --hold)
  scontrol update jobid="$blocker" nice=-50000
  scontrol release "$blocker"
  tb_wait 20 has_start "$blocker" || tb_die "$name: blocker $blocker got no planned start"
  local d t_sub probe state start limit reason bstart planned k=0
  for d in "${deltas[@]}"; do
    local W=$((L * 60 + d))
    local at=$((R - W))
    local case_id="$name-d$d"
    # The snapshot rv would read, taken a second before the probe is submitted.
    sleep_until "$((at - 1))"
    date '+%s %z' >"$dir/cases/$case_id.date"
    # The whole queue, as rv reads it: `-w` would drop the pending blocker (it has no allocation).
    SLURM_TIME_FORMAT=standard squeue -h -t PD,R,CG -o '%i|%T|%P|%D|%Q|%S|%e|%b|%N|%Y|%r|%j' \
      >"$dir/cases/$case_id.squeue"
    scontrol -d -o show node "$node" >"$dir/cases/$case_id.node"
    bstart=$(field "$blocker" %S)
    sleep_until "$at"
    t_sub=$(now)
    if [[ $tmin == 1 ]]; then
      probe=$(submit "$c" -p "$part" -w "$node" --gres="gpu:$type:$probe_g" -c 1 --mem=1G -t 30 --time-min="$L" -J "bfr-probe-$node")
    else
      probe=$(submit "$c" -p "$part" -w "$node" --gres="gpu:$type:$probe_g" -c 1 --mem=1G -t "$L" -J "bfr-probe-$node")
    fi
    if tb_wait 8 is_running "$probe"; then state=RUNNING; else state=$(field "$probe" %T); fi
    start=$(field "$probe" %S)
    limit=$(field "$probe" %l)
    reason=$(field "$probe" %r)
    planned=$([[ $state == RUNNING ]] && echo - || echo "$start")
    [[ $state == RUNNING ]] || start=-
    scancel "$probe"
    tb_wait 20 gone "$probe" || true
    printf '%s\n' "$case_id	$node	$probe_g	$((L * 60))	$tmin	$d	$((R % 60))	$(head -c 10 "$dir/cases/$case_id.date")	$R	$bstart	$t_sub	$state	$start	$limit	$reason	$planned"
    k=$((k + 1))
  done
  scancel "$hold" "$blocker"
}

run_cluster() {
  local c=$1 version dir
  cluster_env "$c"
  version=$(sinfo -V | awk '{print $2}')
  dir=$out_root/${version%.*}/backfill_rule
  mkdir -p "$dir/cases"
  rm -f "$dir"/cases/* "$dir"/*.txt "$dir"/results.tsv
  local -n list="series_$c"
  local s nodes=()
  for s in "${list[@]}"; do nodes+=("${s%% *}"); done
  idle() { [[ $(sinfo -h -N -n "$(
    IFS=,
    echo "${nodes[*]}"
  )" -o %t | sort -u) == idle ]]; }
  tb_wait 60 idle || tb_die "cluster $c: the series' nodes are not idle: $(sinfo -N)"
  scontrol show config | grep -E '^(SchedulerParameters|SchedulerType|PriorityType|SelectType|SLURM_VERSION) ' >"$dir/scheduler.txt"
  scontrol -o show partition >"$dir/scontrol_show_partition.txt"
  : >"$ids.$c"
  local pids=() i=0
  for s in "${list[@]}"; do
    run_series "$c" "$s" "$dir" >"$dir/results.part$i" &
    pids+=($!)
    i=$((i + 1))
  done
  local rc=0 p
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  {
    printf 'case\tnode\tgpus\tlimit_s\ttime_min\tdelta_s\tphase_s\tsnapshot_epoch\treservation_epoch\tblocker_start_epoch\tsubmit_epoch\tstate\tstart_epoch\tgranted_limit\treason\tplanned_start_epoch\n'
    cat "$dir"/results.part*
  } >"$dir/results.tsv"
  rm -f "$dir"/results.part*
  tb_log "cluster $c ($version): $(($(wc -l <"$dir/results.tsv") - 1)) probes into $dir/results.tsv"
  return $rc
}

for c in $clusters; do (cluster_env "$c") || exit 1; done
pids=()
for c in $clusters; do
  run_cluster "$c" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
