#!/usr/bin/env bash
# The time-to-GPU benchmark (docs/benchmark-time-to-gpu.md): rv against naive sbatch, serial
# failover and the hindsight bound on the same seeded background load, on the local testbed.
# Run as root on the testbed machine, testbed up (docs/testbed.md):
#   bash bench/ttg/run.sh [--short] [--rv PATH] [--out DIR] [ttg.py options...]
# Full run (~22 min): 4 request sizes x 3 repeats. --short (~2.5 min): 2 requests, 1 repeat, a
# 30 s cap (CI's smoke test runs its 1x30m request alone: --short --scenarios 1x30m). Results:
# DIR/table.md, DIR/results.json, DIR/ttg.png (with gnuplot), DIR/workload-seed*.jsonl (the
# submission sequences). Takes the testbed lock for the whole run (RV_TESTBED_LOCKED=1: the caller
# holds it already, as the integration test does).
#   bash bench/ttg/run.sh --across [--rv PATH] [--out DIR] [across.py options...]
# races one request across both testbed clusters (testbed/up.sh --clusters 2), each loaded from its
# own seed, against rv on each alone, serial failover and each cluster's hindsight bound (across.py;
# it takes both clusters' locks per row, not for the whole run). Results: DIR/across.md, across.json.
#   bash bench/ttg/run.sh --estimates [--rv PATH] [--out DIR] [estimates.py options...]
# measures rv's wait estimates against Slurm's own (issue #30 item 3): one single-strategy rv
# request per loaded partition, per seed (estimates.py; --clusters rvtb,rvtb2 runs both clusters at
# once, each taking its own lock per seed). Results: DIR/estimates.md, DIR/samples.json.
#   bash bench/ttg/run.sh --study [--short] [--across] [--rv PATH] [--out DIR] [study.py options...]
# races a study of 16 one-GPU tasks (issue #41 item 5): rv run --array against a job array on the
# partition a user would pick, 16 rv runs in a loop and the array on every partition, on 5 seeds
# drawn at run time (~8 min a seed); --short: 1 seed, 6 tasks of 5 s (~3 min). study.py takes the
# testbed lock per arm, not for the whole run. Results: DIR/study.md, DIR/study.json.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rv=$root/build/cli/rv
out=
args=()
across=0
estimates=0
study=0
short=0
while (($#)); do
  case $1 in
    --across) across=1 ;;
    --estimates) estimates=1 ;;
    --study) study=1 ;;
    --short) short=1 ;;
    --rv) rv=$2; shift ;;
    --out) out=$2; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
[[ $(id -u) == 0 ]] || { echo "ttg: run as root (background users, sdiag, scancel)" >&2; exit 1; }
[[ -x $rv ]] || { echo "ttg: no rv binary at $rv (build it: cmake --build build --target rv)" >&2; exit 1; }
# shellcheck source=/dev/null
. "${TB_DIR:-/tmp/rv-testbed}/env"
if ((study)); then
  ((short == 0)) || args=(--random-seeds 1 --tasks 6 --task-s 5 --cap 60 "${args[@]}")
  ((across == 0)) || args+=(--across)
  across=0 estimates=0
  out=${out:-$root/build/bench-ttg/study-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$out"
  echo "ttg: results in $out (log: $out/log)" >&2
  exec python3 "$here/study.py" --rv "$(realpath "$rv")" --out "$out" "${args[@]}" 2> >(tee "$out/log" >&2)
fi
((short == 0)) || args=(--scenarios "1x30m,4x3h" --repeats 1 --cap 30 --hindsight-groups 1 "${args[@]}")
if ((across || estimates)); then
  mode=$( ((across)) && echo across || echo estimates)
  out=${out:-$root/build/bench-ttg/$mode-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$out"
  echo "ttg: results in $out (log: $out/log)" >&2
  exec python3 "$here/$mode.py" --rv "$(realpath "$rv")" --out "$out" "${args[@]}" 2> >(tee "$out/log" >&2)
fi
if [[ ${RV_TESTBED_LOCKED:-0} != 1 ]]; then
  exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
  flock -w 2400 9 || { echo "ttg: the testbed lock stayed taken" >&2; exit 1; }
fi
out=${out:-$root/build/bench-ttg/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
# Whatever happens, no job of ours outlives the run (ttg.py purges between replays too).
cleanup() {
  local ids
  ids=$(squeue -h -u "$(printf 'rvbg%02d,' 1 2 3 4 5 6 7 8)rvtest" -o '%i %u %j' 2>/dev/null |
    awk '$2 ~ /^rvbg/ || index($3, "ttg-") == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "ttg: results in $out (log: $out/log)" >&2
python3 "$here/ttg.py" --rv "$(realpath "$rv")" --out "$out" "${args[@]}" 2> >(tee "$out/log" >&2)
