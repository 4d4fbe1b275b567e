#!/usr/bin/env bash
# The clang + libc++ lane (issue #40, docs/portability.md): the whole tree built with clang-16 and
# LLVM's libc++ instead of libstdc++ (the standard library macOS compiles rv with; fmt and spdlog
# header-only, cmake/RvLibcxx.cmake) into build-libcxx/, then the unit tests run with it. CI runs it
# beside the cluster lane (.ci/run); it prints its wall and CPU seconds.
# Usage: scripts/libcxx.sh [DOCTEST_ARG...]   (exit 0: built and every unit test passed)
# Needs: clang-16 libc++-16-dev libc++abi-16-dev (RV_LIBCXX_PACKAGES in scripts/lib.sh).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${RV_LIBCXX_BUILD_DIR:-$root/build-libcxx}
cxx=${RV_LIBCXX_CXX:-clang++-16}
jobs=${RV_LIBCXX_JOBS:-2}
log() { printf 'libcxx: %s\n' "$*" >&2; }
command -v "$cxx" >/dev/null || { log "error: $cxx not found (apt-get install clang-16 libc++-16-dev libc++abi-16-dev)"; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# CPU seconds of this script's children so far (user + system): bash's `times`, run in this shell
# (in a $(...) it would count the subshell's children only).
cpu_s() {
  times >"$build/lane-times"
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$build/lane-times"
}
t0=$SECONDS
mkdir -p "$build"
if [[ ! -f $build/build.ninja ]]; then
  # -O0 without debug information: the lane checks that libc++ compiles rv and that the tests pass,
  # not speed, at about half the CPU of -O2 (docs/testing.md, "The libc++ lane"). File by file, not
  # a unity build: the one build in CI where a source that forgets an include fails.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0" -DCMAKE_UNITY_BUILD=OFF \
    -DCMAKE_CXX_COMPILER="$cxx" -DRV_LIBCXX=ON "${launcher[@]}" >"$build/lane-configure.log" 2>&1 ||
    { cat "$build/lane-configure.log" >&2; log "error: cmake could not configure $build"; exit 2; }
fi
if ! cmake --build "$build" -j "$jobs" >"$build/lane-build.log" 2>&1; then
  cpu_s >"$build/lane-cpu"
  grep -E 'error:|FAILED:' "$build/lane-build.log" | head -40 >&2
  log "error: the clang + libc++ build failed ($build/lane-build.log) after $((SECONDS - t0)) s, $(cat "$build/lane-cpu") CPU s"
  exit 1
fi
cpu_s >"$build/lane-cpu"
log "built everything in $((SECONDS - t0)) s, $(cat "$build/lane-cpu") CPU s"
# The binary really is libc++'s.
if ! readelf -d "$build/tests/rv_tests" | grep -q 'libc++'; then
  log "error: $build/tests/rv_tests does not link libc++"
  exit 1
fi
t1=$SECONDS
"$build/tests/rv_tests" --no-intro=true "$@" >"$build/lane-tests.log" 2>&1
rc=$?
tail -4 "$build/lane-tests.log" >&2
# A test that cannot run here says so (tests/unit/skip.hpp); doctest counts it as passed: name them.
skipped=$(grep -c 'RV-TEST-SKIPPED:' "$build/lane-tests.log")
((skipped == 0)) || { log "$skipped unit tests SKIPPED (not passed):"; grep 'RV-TEST-SKIPPED:' "$build/lane-tests.log" | sort | uniq -c >&2; }
((rc == 0)) || { grep -B2 -A12 'ERROR' "$build/lane-tests.log" | head -80 >&2; log "error: the unit tests failed under libc++"; }
cpu_s >"$build/lane-cpu"
log "unit tests in $((SECONDS - t1)) s; the lane: $((SECONDS - t0)) s, $(cat "$build/lane-cpu") CPU s"
exit "$rc"
