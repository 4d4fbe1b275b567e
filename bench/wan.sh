#!/usr/bin/env bash
# rv at a distance (#28): the testbed's WAN proxy (testbed/wan_proxy.py, docs/testbed.md) puts a
# round trip of 0 or 40 ms between rv and the login node; each command is timed cold (a login per
# run, RV_CONNECTION_PERSIST=0) and through the held connection (`rv connect` first), and the
# ratio printed from the same run. Commands: `rv exec true`, `rv ps`, `rv run --dry-run`, `rv run`
# to submitted, `rv run -f` of examples/hello to its first output line (with sync; and rv's own part
# of it, less Slurm's queue and start: docs/benchmarks.md), and
# `rv exec true` through a bastion (a second proxy of the bench's own in front of rvtb-bastion).
# Every number is the median of REPEAT runs (the machine is shared). Run as root, testbed up:
#   bash bench/wan.sh [RV]   (env: REPEAT=5, RTTS="0 40", FOLLOW=1: also rv run -f)
# A/B of rv run -f's own part, held, at the first of RTTS (default 40 ms): two binaries in turn,
# REPEAT rounds after one warm-up run each, each binary with its own state and held connection,
# and the testbed lock (and the proxy's round trip) taken for one run at a time, so that others'
# tests run between them; every run is printed:
#   AB=1 bash bench/wan.sh OLD_RV NEW_RV
# Numbers: docs/benchmarks.md, "At a distance".
set -euo pipefail

AB=${AB:-0}
RV_B=""
if ((AB != 0)); then
  RV_B=$(realpath "${2:?AB=1 needs two binaries: OLD_RV NEW_RV}")
fi
RV=$(realpath "${1:-build/cli/rv}")
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPEAT=${REPEAT:-5}
RTTS=${RTTS:-0 40}
FOLLOW=${FOLLOW:-1}
# shellcheck source=testbed/lib.sh
. "$SRC/testbed/lib.sh"
# shellcheck source=/dev/null
. "${TB_DIR:-/tmp/rv-testbed}/env"
[[ -n ${TB_WAN:-} && -x $TB_WAN ]] || { echo "wan: the testbed has no WAN proxy (testbed/up.sh starts it)" >&2 && exit 1; }
exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
lock() { flock -w 2400 9 || { echo "wan: the testbed lock stayed taken" >&2 && exit 1; }; }
((AB != 0)) || lock
WORK=$(mktemp -d /tmp/rv-bench-wan.XXXXXX)
export RV_STATE_DIR=$WORK/state XDG_CONFIG_HOME=$WORK/config XDG_RUNTIME_DIR=$WORK/run NO_COLOR=1
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset RV_HOST RV_CONFIG RV_ACCOUNT
NAME=rv-bench-wan-$$
BASTION_PORT=${BENCH_WAN_BASTION_PORT:-2229}
rtt_before=$("$TB_WAN" rtt)
proxy_pid=""
cleanup() {
  "$RV" disconnect --all >/dev/null 2>&1 || true
  if [[ -n $RV_B ]]; then
    for side in a b; do RV_STATE_DIR=$WORK/$side/state XDG_RUNTIME_DIR=$WORK/$side/run "$RV" disconnect --all >/dev/null 2>&1 || true; done
  fi
  [[ -z $proxy_pid ]] || kill "$proxy_pid" 2>/dev/null || true
  scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
  "$TB_WAN" rtt "$rtt_before"
  rm -rf "$WORK"
}
trap cleanup EXIT

# The bench's own config: the testbed's, plus a bastion behind a second proxy (same rtt file).
cat >"$WORK/ssh_config" <<CONF
Include $TB_SSH_CONFIG
Host wan-bastion
  HostName 127.0.0.1
  Port $BASTION_PORT
  User $TB_SSH_USER
  IdentityFile $TB_SSH_KEY
  UserKnownHostsFile $WORK/known_hosts
  IdentitiesOnly yes
  BatchMode yes
$(tb_ssh_jump_host wan-jump wan-bastion)
CONF
{
  cat "$TB_SSH_KNOWN_HOSTS"
  printf '[127.0.0.1]:%s %s\n' "$BASTION_PORT" "$(awk 'NR == 1 { print $2, $3 }' "$TB_SSH_KNOWN_HOSTS")"
} >"$WORK/known_hosts"
python3 "$TB_DIR/bin/wan_proxy.py" "$BASTION_PORT" "$TB_BASTION_PORT" "$TB_DIR/wan" "$WORK/bastion-proxy.pid" \
  >"$WORK/bastion-proxy.log" 2>&1 &
proxy_pid=$!

ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } print v[int((NR + 1) / 2)] }'; }
rv_at() { "$RV" --ssh-config "$WORK/ssh_config" --host "$HOST" "$@"; }

# timed ARGS...: the median ms of REPEAT runs of `rv ARGS` (its output discarded; a failure stops the bench).
timed() {
  local i t0 all=()
  for ((i = 0; i < REPEAT; i++)); do
    t0=$(ms)
    rv_at "$@" </dev/null >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2 && exit 1; }
    all+=($(($(ms) - t0)))
    [[ $* != run\ --no-sync* ]] || scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
  done
  printf '%s\n' "${all[@]}" | median
}

# One `rv run -f` of examples/hello (synced) to the line the job printed, in ms: "TOTAL OWN SACCT_OWN".
# TOTAL: from rv's start to the job's line on rv's stdout. OWN: rv's own part, measured on this
# machine's clock (the testbed's nodes share it): from rv's start to the submitted table on stderr
# (sync, plan, sbatch), plus from the job writing its line (it prints its own ms clock) to rv
# printing it (the follow). SACCT_OWN: TOTAL less Slurm's submit-to-start of the winner as sacct
# records it (whole seconds: +-1 s a run; the median of REPEAT runs).
first_line() {
  local t0 line got=-1 job_ms=-1 sub_ms=-1 rid winner span
  rm -rf "$WORK/hello" && cp -r "$SRC/examples/hello" "$WORK/hello"
  # shellcheck disable=SC2016  # expanded by the job, not here
  printf '#!/bin/sh\necho "hello from rv-bench $(date +%%s%%3N)"\n' >"$WORK/hello/stamp.sh"
  : >"$WORK/stderr.ts"
  t0=$(ms)
  while IFS= read -r line; do
    if [[ $line == "hello from rv-bench "* ]] && ((got < 0)); then
      got=$(($(ms) - t0))
      job_ms=${line##* }
    fi
  done < <(cd "$WORK/hello" && rv_at run -f -g 1 --time 5m --max-strategies 2 --name "$NAME" sh stamp.sh \
    2> >(while IFS= read -r l; do printf '%s %s\n' "$(ms)" "$l"; done >>"$WORK/stderr.ts"))
  sleep 0.2 # the stderr stamper's last lines
  read -r sub_ms rid < <(sed -n 's/^\([0-9]*\) request \([0-9a-f]\{8\}\) (.*/\1 \2/p' "$WORK/stderr.ts" | head -n1) || true
  if ((got < 0 || ${sub_ms:--1} < 0)); then
    echo "-1 -1 -1 -1 -1"
    return
  fi
  winner=$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .job_id' "$RV_STATE_DIR/requests/$rid.json")
  span=$(SLURM_TIME_FORMAT=%s sacct -X -n -P -j "$winner" -o Submit,Start 2>/dev/null | awk -F'|' 'NR == 1 { print $2 - $1 }')
  echo "$got $(((sub_ms - t0) + (t0 + got - job_ms))) $((got - ${span:-0} * 1000)) $((sub_ms - t0)) $((t0 + got - job_ms))"
}
# The medians of REPEAT runs of first_line: "TOTAL OWN SACCT_OWN PRE POST" (PRE: rv's start to the
# submitted table; POST: the job's line to rv's output, which holds the race's detection of the
# start and the follow's first reads).
timed_first_line() {
  local i k all=() cols=() out=""
  for ((i = 0; i < REPEAT; i++)); do all+=("$(first_line)"); done
  for k in 1 2 3 4 5; do
    cols=()
    for i in "${!all[@]}"; do cols+=("$(cut -d' ' -f"$k" <<<"${all[$i]}")"); done
    out+="$(printf '%s\n' "${cols[@]}" | median) "
  done
  echo "${out% }"
}

# measure LABEL HOST KIND ARGS...: one row, cold and held.
measure() {
  local label=$1 kind=$3 cold held
  HOST=$2
  shift 3
  rv_at disconnect >/dev/null 2>&1 || true
  if [[ $kind == follow ]]; then
    cold=$(RV_CONNECTION_PERSIST=0 timed_first_line)
  else
    cold=$(RV_CONNECTION_PERSIST=0 timed "$@")
  fi
  RV_CONNECTION_PERSIST=30m rv_at connect </dev/null >/dev/null 2>&1
  if [[ $kind == follow ]]; then
    held=$(RV_CONNECTION_PERSIST=30m timed_first_line)
  else
    held=$(RV_CONNECTION_PERSIST=30m timed "$@")
  fi
  rv_at disconnect >/dev/null 2>&1 || true
  if [[ $kind == follow ]]; then
    local c_total c_own c_acct c_pre c_post h_total h_own h_acct h_pre h_post
    read -r c_total c_own c_acct c_pre c_post <<<"$cold"
    read -r h_total h_own h_acct h_pre h_post <<<"$held"
    row "$label" "$c_total" "$h_total"
    row "rv run -f: rv's own part (to submitted + job line to output)" "$c_own" "$h_own"
    row "... of it: rv's start to submitted (sync, plan, sbatch)" "$c_pre" "$h_pre"
    row "... of it: the job's line to rv's output (race, follow)" "$c_post" "$h_post"
    row "rv run -f: the whole run less Slurm's submit-to-start (sacct, whole s)" "$c_acct" "$h_acct"
    own_held=$h_own
    return
  fi
  row "$label" "$cold" "$held"
}
row() { # LABEL COLD HELD
  printf '| %s | %s ms | %s | %s | %s |\n' "$1" "$rtt" "$2" "$3" \
    "$(awk -v c="$2" -v h="$3" 'BEGIN { if (h > 0) printf "%.1fx", c / h; else print "-" }')"
}
own_held=-1

# AB=1: OLD and NEW in turn, held, at the first of RTTS; the lock and the round trip only around
# each run. Prints every run: "ROUND BINARY TOTAL OWN SACCT_OWN PRE POST".
if ((AB != 0)); then
  rtt=${RTTS%% *}
  # shellcheck disable=SC2153  # TB_WAN_HOST comes from the testbed env
  HOST=$TB_WAN_HOST
  one_run() { # SIDE BINARY: one held first_line with that binary's own state and holder
    local side=$1 out
    lock
    "$TB_WAN" rtt "$rtt"
    out=$(RV=$2 RV_STATE_DIR=$WORK/$side/state XDG_RUNTIME_DIR=$WORK/$side/run RV_CONNECTION_PERSIST=30m first_line)
    scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
    "$TB_WAN" rtt "$rtt_before"
    flock -u 9
    echo "$out"
  }
  for side in a b; do
    mkdir -p "$WORK/$side/state" && mkdir -m 700 "$WORK/$side/run"
    bin=$RV && [[ $side == a ]] || bin=$RV_B
    RV=$bin RV_STATE_DIR=$WORK/$side/state XDG_RUNTIME_DIR=$WORK/$side/run RV_CONNECTION_PERSIST=30m rv_at connect </dev/null >/dev/null 2>&1
  done
  echo "rv run -f A/B at ${rtt} ms, held: $(date -u +%FT%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "A = $RV ($("$RV" --version | head -n1)), B = $RV_B ($("$RV_B" --version | head -n1))"
  echo "round binary total own sacct_own to_submitted line_to_output load"
  for ((round = 0; round <= REPEAT; round++)); do
    for side in a b; do
      bin=$RV && [[ $side == a ]] || bin=$RV_B
      res=$(one_run "$side" "$bin")
      echo "$( ((round == 0)) && echo warm-up || echo "$round") $side $res $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
  exit 0
fi

echo "rv at a distance: $(date -u +%F), median of $REPEAT runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| command | RTT | cold (ms) | held (ms) | cold / held |"
echo "| --- | --- | --- | --- | --- |"
for rtt in $RTTS; do
  "$TB_WAN" rtt "$rtt"
  # shellcheck disable=SC2153  # TB_WAN_HOST comes from the testbed env
  measure "rv exec true" "$TB_WAN_HOST" plain exec true
  # rv ps asks the cluster only about live requests: one is kept running while it is timed.
  HOST=$TB_WAN_HOST rv_at run --no-sync -g 1 --time 5m --name "$NAME" -- sleep 600 </dev/null >/dev/null 2>&1
  HOST=$TB_WAN_HOST rv_at ps </dev/null >/dev/null 2>&1 # its first ps cancels the losers: not timed
  measure "rv ps (one live request)" "$TB_WAN_HOST" plain ps
  scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
  measure "rv run --dry-run" "$TB_WAN_HOST" plain run --dry-run --no-sync -g 1 --time 5m -- true
  measure "rv run, to submitted" "$TB_WAN_HOST" plain run --no-sync -g 1 --time 5m --name "$NAME" -- true
  ((FOLLOW == 0)) || measure "rv run -f examples/hello, to its output (sync)" "$TB_WAN_HOST" follow
  measure "rv exec true, through a bastion (the laptop-bastion leg at this RTT)" wan-jump plain exec true
  if ((FOLLOW != 0)); then
    # Issue #38 item 7: at 40 ms, rv's own part of `rv run -f` (held) <= 3 round trips + 150 ms.
    target=$((3 * rtt + 150))
    verdict=$(awk -v o="$own_held" -v t="$target" 'BEGIN { print (o >= 0 && o <= t) ? "met" : "NOT MET" }')
    echo "rv run -f at ${rtt} ms: rv's own part held ${own_held} ms, target <= ${target} ms (3 round trips + 150 ms): $verdict"
  fi
done
