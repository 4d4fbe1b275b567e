#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang-16 (build-fuzz/, RV_FUZZ=ON) and runs each for
# a fixed budget from its seed corpus (fuzz/corpus/<target>/). One line per target; exit 1 on any
# crash, timeout, out-of-memory or sanitizer report (the inputs stay in build-fuzz/artifacts/).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 10 s, every target)
#        RV_FUZZ_RUNS=N scripts/fuzz.sh 0 [TARGET...]   (N inputs per target, however long that takes)
#        scripts/fuzz.sh --build-only                     (build the targets, run none; CI builds
#                                                          them beside the integration tests)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_only=0
if [[ ${1:-} == --build-only ]]; then
  build_only=1
  shift
fi
secs=${1:-10}
shift || true
build=$root/build-fuzz
cxx=${RV_FUZZ_CXX:-clang++-16}
jobs=${RV_FUZZ_JOBS:-2}

if ! command -v "$cxx" > /dev/null; then
  echo "fuzz.sh: $cxx not found (apt-get install clang-16)" >&2
  exit 2
fi
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_COMPILER="$cxx" \
  -DRV_FUZZ=ON -DBUILD_TESTING=OFF -DRV_WARNINGS_AS_ERRORS=OFF "${launcher[@]}" > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 2; }
cmake --build "$build" --target rv_fuzz_all -j "$jobs" > "$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log" >&2; exit 2; }
((build_only == 0)) || exit 0

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$build"/fuzz/rv_fuzz_*; do
    [[ -x $f ]] && targets+=("${f##*/rv_fuzz_}")
  done
fi

mkdir -p "$build/artifacts" "$build/corpus"
bad=0
printf '%-14s %10s %10s %8s %8s %s\n' target runs execs/s seconds crashes result
for t in "${targets[@]}"; do
  work=$build/corpus/$t # the grown corpus; the seeds in fuzz/corpus/ stay as they are
  mkdir -p "$work"
  log=$build/artifacts/$t.log
  seeds=()
  [[ -d $root/fuzz/corpus/$t ]] && seeds=("$root/fuzz/corpus/$t")
  budget=(-max_total_time="$secs")
  [[ -n ${RV_FUZZ_RUNS:-} ]] && budget=(-runs="$RV_FUZZ_RUNS")
  t0=$SECONDS
  "$build/fuzz/rv_fuzz_$t" "${budget[@]}" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$work" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashes=$(grep -c -E '^==[0-9]+==ERROR|^SUMMARY: .*Sanitizer|runtime error:|rv fuzz invariant broken|ALARM: working on the last Unit' "$log")
  result=ok
  if ((rc != 0 || crashes > 0)); then
    result="FAILED (rc $rc; $(grep -m1 -o 'Test unit written to .*' "$log"))"
    ((crashes == 0)) && crashes=1
    bad=1
  fi
  printf '%-14s %10s %10s %8s %8s %s\n' "$t" "${runs:-?}" "${rate:-?}" "$((SECONDS - t0))" "$crashes" "$result"
done
exit $bad
