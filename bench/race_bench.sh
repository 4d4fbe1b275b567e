#!/usr/bin/env bash
# The race on the local testbed, per fan-out width: how long after the winner starts the last
# loser is cancelled (sacct: winner Start vs the latest End of the CANCELLED losers), and how many
# slurmctld RPCs user rvtest issues per minute while the race waits (sdiag, "Remote Procedure Call
# statistics by user").
#
# Each width: every GPU partition is filled by root, `rv run -f -g 1 --mig --max-strategies N`
# submits and races (all pending), after RACE_S seconds one partition is released, its job wins,
# the others are cancelled. Run as root on the testbed machine, testbed up (docs/testbed.md):
#   bash bench/race_bench.sh [RV] (env: WIDTHS="2 8 16", RACE_S=60)
# See docs/benchmarks.md. rvtest must be otherwise idle (another session's rvtest traffic would be
# counted too: the script warns when it sees rvtest jobs that are not its own).
set -euo pipefail

RV=${1:-build/cli/rv}
WIDTHS=${WIDTHS:-2 8 16}
RACE_S=${RACE_S:-60}
# shellcheck source=/dev/null
. "${TB_DIR:-/tmp/rv-testbed}/env"
RV=$(realpath "$RV")
# The cluster is shared with the integration tests: take their lock (tests/integration/lib.sh).
exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
flock -w 2400 9 || { echo "race_bench: the testbed lock stayed taken" >&2; exit 1; }
WORK=$(mktemp -d /tmp/rv-race-bench.XXXXXX)
export RV_STATE_DIR=$WORK/state XDG_CONFIG_HOME=$WORK/config NO_COLOR=1
unset RV_HOST RV_CONFIG RV_ACCOUNT
NAME=rv-bench-race-$$
occupiers=()
rv_pid=
cleanup() {
  [[ -z $rv_pid ]] || kill "$rv_pid" 2>/dev/null || true
  ((${#occupiers[@]} == 0)) || scancel "${occupiers[@]}" 2>/dev/null || true
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

now() { date +%s.%N; }
wait_until() { # seconds what cmd...
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS - start < limit)) || { echo "timed out after ${limit}s waiting for $what" >&2; exit 1; }
    sleep 0.2
  done
}
rvtest_rpcs() { sdiag | awk '/statistics by user/ { u = 1; next } u && $1 == "rvtest" && match($0, /count:[0-9]+/) { print substr($0, RSTART + 6, RLENGTH - 6); exit }'; }
job_running() { [[ $(squeue -h -j "$1" -o %T) == RUNNING ]]; }

# partition -> occupier job ids (space separated); every node of every GPU partition is filled.
declare -A held
occupy() { # partition gres [nodes]: one job holding every GPU of the partition's nodes
  local id
  # One job for all nodes: holding them one by one can wedge against another session's 2-node
  # job (FIFO: it blocks our second occupier while our first blocks it).
  id=$(sbatch --parsable -p "$1" -N "${3:-1}" --gres="$2" -t 30 -J rv-bench-occupy -o /dev/null --wrap 'sleep 1800')
  occupiers+=("$id")
  held[$1]="${held[$1]:-} $id"
  wait_until 180 "occupier $id on $1 to run" job_running "$id"
}
occupy_all() {
  occupy gpu-a100 gpu:a100:8 2
  occupy gpu-a6000 gpu:a6000:8
  occupy gpu-v100 gpu:v100:4
  occupy gpu-h200 gpu:h200:4
  occupy gpu-mig gpu:a100_1g.10gb:7
}

record_state() { jq -r .state "$RV_STATE_DIR/requests/$1.json" 2>/dev/null; }
submitted() { rid=$(sed -n 's/^request \([0-9a-f]\{8\}\) (.*/\1/p' "$WORK/err" | head -n1); [[ -n $rid && $(record_state "$rid") == submitted ]]; } # rv run -f: the table is on stderr
rv_done() { ! kill -0 "$rv_pid" 2>/dev/null; }
sacct_final() { # every job of the comma list has a final state in accounting
  local n
  n=$(awk -F, '{ print NF }' <<<"$1")
  [[ $(SLURM_TIME_FORMAT=%s sacct -X -P -n -j "$1" -o State | grep -cE '^(CANCELLED|COMPLETED|FAILED|TIMEOUT)') == "$n" ]]
}

# RPCs one squeue call costs rvtest (squeue 22.05: REQUEST_FED_INFO + REQUEST_JOB_INFO = 2);
# the least of 3 tries, as other rvtest traffic can only add.
per_squeue=
for _ in 1 2 3; do
  a=$(rvtest_rpcs)
  ssh -F "$TB_SSH_CONFIG" rvtb 'squeue -h -t all -j 1,2 -o %i' >/dev/null 2>&1 || true
  b=$(rvtest_rpcs)
  ((${per_squeue:-999} <= b - a)) || per_squeue=$((b - a))
done
echo "one squeue call = $per_squeue slurmctld RPCs" >&2
printf '%-6s %-10s %-7s %-8s %-16s %-14s %-12s %-13s %-14s %-17s %-10s\n' width strategies race_s rv_exit winner last_cancel_s rv_saw_win_s polls_per_min rv_rpc_per_min sdiag_rpc_per_min sdiag_rpcs_total
for width in $WIDTHS; do
  occupiers=() held=()
  occupy_all
  others=$(squeue -h -u rvtest -o '%j' | grep -vc "^$NAME" || true)
  ((others == 0)) || echo "warning: $others other rvtest jobs in the queue: sdiag counts their RPCs too" >&2
  c_start=$(rvtest_rpcs)
  env --default-signal=INT "$RV" -vv --ssh-config "$TB_SSH_CONFIG" --host rvtb run -f -g 1 --mig --max-strategies "$width" \
    --time 10m --name "$NAME-$width" -- 'sleep 5' </dev/null >"$WORK/out" 2>"$WORK/err" &
  rv_pid=$!
  wait_until 60 "the submission of width $width" submitted
  t_sub=$(now) # the race loop starts right after the record says submitted (to within the 0.2 s poll here)
  rec=$RV_STATE_DIR/requests/$rid.json
  ids=$(jq -r '[.jobs[] | select(.job_id != "") | .job_id] | join(",")' "$rec")
  n=$(awk -F, '{ print NF }' <<<"$ids")
  # The race proper: every strategy pends; rv polls.
  c0=$(rvtest_rpcs) t0=$(now) l0=$(wc -l <"$WORK/err")
  sleep "$RACE_S"
  c1=$(rvtest_rpcs) t1=$(now) l1=$(wc -l <"$WORK/err")
  # rv's own share, from its trace (-vv logs every remote command line): squeue calls x RPCs each.
  polls=$(sed -n "$((l0 + 1)),${l1}p" "$WORK/err" | grep -c 'ssh: exec .*squeue' || true)
  others=$(sed -n "$((l0 + 1)),${l1}p" "$WORK/err" | grep -cE 'ssh: exec .*(scontrol|scancel|sbatch)' || true)
  # Release the partition of the last-ranked strategy (not a100: it has two nodes).
  part=$(jq -r '[.jobs[] | select(.job_id != "" and .partition != "gpu-a100") | .partition] | last' "$rec")
  # shellcheck disable=SC2086  # one word per job id
  scancel ${held[$part]}
  wait_until 120 "rv -f of width $width to finish" rv_done
  rc=0
  wait "$rv_pid" || rc=$?
  rv_pid=
  c_end=$(rvtest_rpcs)
  wait_until 60 "accounting of $ids" sacct_final "$ids"
  rows=$(SLURM_TIME_FORMAT=%s sacct -X -P -n -j "$ids" -o JobID,Partition,State,Start,End)
  winner=$(awk -F'|' '$3 == "COMPLETED" { print $1 "@" $2 }' <<<"$rows")
  win_start=$(awk -F'|' '$3 == "COMPLETED" { print $4 }' <<<"$rows")
  last=$(awk -F'|' -v s="$win_start" '$3 ~ /^CANCELLED/ { d = $5 - s; if (n++ == 0 || d > m) m = d } END { print (n ? m : "-") }' <<<"$rows")
  # rv logs "sN won: job J on NODE after X s": X counts from the start of its race loop.
  after=$(sed -n 's/.* won: job .* after \([0-9.]*\) s .*/\1/p' "$WORK/err" | head -1)
  seen=$(awk -v t="$t_sub" -v x="${after:-nan}" -v s="$win_start" 'BEGIN { printf "%.1f", t + x - s }')
  own=$(awk -v p="$polls" -v o="$others" -v r="$per_squeue" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (p * r + o) * 60 / (t1 - t0) }')
  rate=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (b - a) * 60 / (t1 - t0) }')
  printf '%-6s %-10s %-7s %-8s %-16s %-14s %-12s %-13s %-14s %-17s %-10s\n' "$width" "$n" "$RACE_S" "$rc" "$winner" "$last" "$seen" \
    "$(awk -v p="$polls" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", p * 60 / (t1 - t0) }')" "$own" "$rate" \
    "$((c_end - c_start))"
  [[ -n ${BENCH_VERBOSE:-} ]] && { echo "$rows"; cat "$WORK/err"; } >&2
  scancel "${occupiers[@]}" 2>/dev/null || true
  wait_until 60 "the occupiers to leave" bash -c "[[ -z \$(squeue -h -j $(IFS=,; echo "${occupiers[*]}")) ]]"
done
