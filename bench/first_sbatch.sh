#!/usr/bin/env bash
# Time to the first sbatch on the local testbed, through the loopback sshd (issue #12, "Half a
# second to the first sbatch"): `rv run` from start to the moment it returns after submitting
# (an upper bound of "first job submitted": rv returns once every sbatch of the fan-out answered),
# cold (the discovery cache expired: its fetched_at set an hour back; the association facts, which
# live longer, kept: docs/discovery-cache.md), warm (cache written by the previous run) and at first contact
# (no cache at all); `rv up --dry-run` round trips; slurmctld's RPCs per `rv up --dry-run` (sdiag
# by message type, difference around one call) with probe_concurrency 1 and the default. With a
# second rv (BASE, e.g. main's), both are timed in the same run, interleaved, each with its own
# state, and the ratios printed. Prints numbers; run as root with the testbed up:
#   bash bench/first_sbatch.sh [RV [BASE]]   (env: REPEAT=7, GPUS=1)
# The machine is shared: every number is the median of REPEAT runs. See docs/benchmarks.md.
set -euo pipefail

RV=$(realpath "${1:-build/cli/rv}")
BASE=
[[ -z ${2:-} ]] || BASE=$(realpath "$2")
REPEAT=${REPEAT:-7}
GPUS=${GPUS:-1}
# shellcheck source=/dev/null
. "${TB_DIR:-/tmp/rv-testbed}/env"
exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
flock -w 2400 9 || { echo "first_sbatch: the testbed lock stayed taken" >&2; exit 1; }
WORK=$(mktemp -d /tmp/rv-first-sbatch.XXXXXX)
export RV_STATE_DIR=$WORK/state XDG_CONFIG_HOME=$WORK/config NO_COLOR=1
BASE_STATE=$WORK/state-base
unset RV_HOST RV_CONFIG RV_ACCOUNT
NAME=rv-bench-first-$$
cleanup() {
  scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb "$@"; }
base() { RV_STATE_DIR=$BASE_STATE "$BASE" --ssh-config "$TB_SSH_CONFIG" --host rvtb "$@"; }
# An rv without the discovery cache (main before #12) is measured cold only: the baseline.
CACHED=1
help=$("$RV" up --help 2>/dev/null || true) # not piped into grep -q: its early exit is a SIGPIPE, and pipefail
[[ $help == *--no-cache* ]] || CACHED=0
NO_CACHE=()
((CACHED == 0)) || NO_CACHE=(--no-cache)
ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } print v[int((NR + 1) / 2)] }'; }

# One `rv run` of rv (or base, the first argument); prints its wall time in ms; its -v log goes to
# $WORK/last.log.
one_run() {
  local t0 t1 bin=$1
  shift
  t0=$(ms)
  "$bin" -v run --no-sync -g "$GPUS" --time 5m --name "$NAME" "$@" -- true >/dev/null 2>"$WORK/last.log"
  t1=$(ms)
  scancel -u "$TB_SSH_USER" -n "$NAME" 2>/dev/null || true
  echo $((t1 - t0))
}
split() { # the time split of the last run, from its -v log
  sed -n 's/.*debug: \(plan: .*\)/\1/p; s/.*debug: \(submit: .*\)/\1/p; s/.*debug: \(ssh: connected .*\)/\1/p' "$WORK/last.log" |
    paste -sd ';' -
}

# cold: the discovery cache expired (its fetched_at an hour back), what else rv caches kept.
expire() {
  local f
  for f in "$1"/cache/discovery-*.json; do
    [[ -e $f ]] || continue
    jq -c '.fetched_at -= 3600' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
  done
}
first=() cold=() warm=() bcold=() bwarm=()
one_run rv >/dev/null # caches what lives longer than the discovery cache (association facts)
[[ -z $BASE ]] || one_run base >/dev/null
for ((i = 0; i < REPEAT; i++)); do
  expire "$RV_STATE_DIR"
  cold+=("$(one_run rv)")
  ((i > 0)) || echo "cold split: $(split)"
  if [[ -n $BASE ]]; then
    expire "$BASE_STATE"
    bcold+=("$(one_run base)")
    ((i > 0)) || echo "base cold split: $(split)"
  fi
  ((CACHED == 1)) || continue
  warm+=("$(one_run rv)")
  ((i > 0)) || echo "warm split: $(split)"
  if [[ -n $BASE ]]; then
    bwarm+=("$(one_run base)")
    ((i > 0)) || echo "base warm split: $(split)"
  fi
done
for ((i = 0; i < REPEAT; i++)); do
  rm -rf "$RV_STATE_DIR/cache"
  first+=("$(one_run rv)")
  ((i > 0)) || echo "first-contact split: $(split)"
done
med() { printf '%s\n' "$@" | median; }
echo "rv run to submitted, cold: median $(med "${cold[@]}") ms of [${cold[*]}]"
((CACHED == 0)) || echo "rv run to submitted, warm: median $(med "${warm[@]}") ms of [${warm[*]}]"
echo "rv run to submitted, first contact (no cache at all): median $(med "${first[@]}") ms of [${first[*]}]"
if [[ -n $BASE ]]; then
  echo "base ($BASE) run to submitted, cold: median $(med "${bcold[@]}") ms of [${bcold[*]}]"
  echo "base run to submitted, warm: median $(med "${bwarm[@]}") ms of [${bwarm[*]}]"
  awk -v a="$(med "${cold[@]}")" -v b="$(med "${bcold[@]}")" -v c="$(med "${warm[@]}")" -v d="$(med "${bwarm[@]}")" \
    'BEGIN { printf "rv / base: cold %.2f, warm %.2f\n", a / b, c / d }'
fi

trips=() secs=()
for ((i = 0; i < REPEAT; i++)); do
  out=$(rv --json up --dry-run -g "$GPUS")
  trips+=("$(jq -r .round_trips <<<"$out")")
  secs+=("$(jq -r '(.seconds * 1000 | floor)' <<<"$out")")
done
echo "rv up --dry-run $( ((CACHED == 1)) && echo warm || echo "(no cache)"): round trips [${trips[*]}], plan median $(printf '%s\n' "${secs[@]}" | median) ms"

# RPCs by message type around one dry run (all users: take the lock, keep the cluster quiet).
rpcs() { sdiag | awk '/by message type/ { m = 1; next } /by user/ { m = 0 } m && match($0, /count:[0-9]+/) { print $1, substr($0, RSTART + 6, RLENGTH - 6) }'; }
rpc_diff() { # label, rv args...
  local label=$1 before after probes
  shift
  before=$(rpcs)
  probes=$(rv --json up --dry-run -g "$GPUS" "$@" | jq -r '"\(.probes) probes, \(.round_trips) round trips, cache \(.cache)"')
  after=$(rpcs)
  echo "$label ($probes): $(join -a 2 -e 0 -o 0,1.2,2.2 <(sort <<<"$before") <(sort <<<"$after") |
    awk '$3 - $2 > 0 { printf "%s=%d ", $1, $3 - $2; t += $3 - $2 } END { printf "total=%d", t }')"
}
mkdir -p "$XDG_CONFIG_HOME/rv"
((CACHED == 0)) || echo '{"probe_concurrency": "1"}' >"$XDG_CONFIG_HOME/rv/config.json"
if ((CACHED == 0)); then
  rpc_diff "RPCs (no cache, probes one after another)"
  exit 0
fi
rpc_diff "RPCs, cold, probe_concurrency 1" "${NO_CACHE[@]}"
rm -f "$XDG_CONFIG_HOME/rv/config.json"
rpc_diff "RPCs, cold, probe_concurrency 4" "${NO_CACHE[@]}"
rv up --dry-run -g "$GPUS" >/dev/null # writes the cache
rpc_diff "RPCs, warm, probe_concurrency 4"
