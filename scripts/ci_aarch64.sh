#!/usr/bin/env bash
# The aarch64 lane (docs/testing.md, "Lanes"; docs/install.md): the linux-aarch64 release tarball,
# cross-built, and tested on an emulated Arm CPU (qemu-aarch64-static, named on each command line:
# CI's container may not register binfmt_misc). .ci/run starts it at nice 15 beside the other lanes
# and fails CI when it fails or has not finished. Three steps, each timed (wall and CPU):
#   1. build: RV_RELEASE_ARCH=aarch64 scripts/release.sh (static, g++-aarch64-linux-gnu and the
#      arm64 -dev packages) writes dist/rv-<version>-linux-aarch64.tar.gz and its .sha256; then
#      rv_tests_core_slurm (the unit tests of core/ and slurm/: the Slurm output parsers, with the
#      captured outputs of tests/data and ../shared/cases/slurm-outputs) in the same build
#      directory, against the very libraries the release rv links, at -Og.
#   2. unit: that test binary under qemu; qemu-user shares this machine's files, so the tests read
#      their captured outputs by the same absolute paths as natively.
#   3. package: tests/package/test_release.sh on the tarball (its files, checksum, licences, man page
#      and completions), then, under qemu in each root (empty, Debian 11, Debian 13, this machine
#      as a uid unknown to NSS): rv --version, rv help, rv help run and rv exec hostname against
#      the testbed's login node. No `rv run -f` (RV_RELEASE_JOBS=0): that holds the testbed alone,
#      which the cluster lane beside it waits for; `ctest -L aarch64` (package.release_aarch64) runs
#      it too.
# Needs RV_AARCH64_PACKAGES (scripts/lib.sh) and, for step 3, the testbed: cluster 1 and cluster 2's
# Debian 13 root, which CI starts beside this lane; step 3 waits for them up to
# RV_AARCH64_TESTBED_WAIT_S (900) seconds. Exit 0: every step passed; 1: one failed (named).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=testbed/lib2.sh
. "$RV_ROOT/testbed/lib2.sh"

build=${RV_AARCH64_BUILD_DIR:-$RV_ROOT/build-release-aarch64}
export RV_RELEASE_BUILD_DIR=$build RV_RELEASE_ARCH=aarch64
log() { printf 'ci_aarch64: %s\n' "$*"; }
die() {
  printf 'ci_aarch64: FAIL: %s\n' "$1"
  [[ -z ${2:-} ]] || printf 'ci_aarch64: hint: %s\n' "$2"
  exit 1
}
qemu=$(command -v qemu-aarch64-static) || die "qemu-aarch64-static is not installed" "apt-get install qemu-user-static (RV_AARCH64_PACKAGES in scripts/lib.sh)"
command -v aarch64-linux-gnu-g++ >/dev/null || die "aarch64-linux-gnu-g++ is not installed" \
  "the lane's packages: . scripts/lib.sh && rv_install_deps \"\${RV_AARCH64_PACKAGES[@]}\""

# CPU seconds of the children waited for so far, in CPU_S: bash's `times` (second line: user and
# system), run in this shell (in a $(...) subshell it would count that subshell's children).
cpu_file=$(mktemp /tmp/rv-aarch64-cpu-XXXXXX)
trap 'rm -f "$cpu_file"' EXIT
CPU_S=0
child_cpu() {
  times >"$cpu_file"
  CPU_S=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%.0f", n }' "$cpu_file")
}
lane_t0=$(tb_now)
step_t0="" step_cpu0=0
step_start() {
  step_t0=$(tb_now)
  child_cpu
  step_cpu0=$CPU_S
}
step_end() {
  child_cpu
  log "$1: $(tb_since "$step_t0") s wall, $((CPU_S - step_cpu0)) s CPU"
}

# 1. The release rv, then the unit tests in the same build directory (BUILD_TESTING=ON there: the
# tests' targets are not in release.sh's, so the tarball is the same either way).
step_start
bash "$RV_ROOT/scripts/release.sh" -DBUILD_TESTING=ON || die "scripts/release.sh (aarch64) failed"
if ! grep -q '^BUILD_TESTING:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -DBUILD_TESTING=ON "$build" >/dev/null || die "cmake could not enable the tests in $build"
fi
cmake --build "$build" --parallel "${RV_BUILD_JOBS:-$(nproc)}" --target rv_tests_core_slurm ||
  die "the unit tests of core/ and slurm/ did not build for aarch64"
step_end "build (release rv, rv_tests_core_slurm)"
version=$(sed -n 's/^project(rv VERSION \([0-9.]*\).*/\1/p' "$RV_ROOT/CMakeLists.txt")
tarball=${RV_DIST_DIR:-$RV_ROOT/dist}/rv-$version-linux-aarch64.tar.gz

# 2. The unit tests on the emulated CPU. doctest's XML report names each test case; a test that
# cannot run here prints the skip marker (tests/unit/skip.hpp) and is counted as skipped, by name.
# The emulator's own limits: the test cases below are left out, each named in the output with why
# (they run natively, in the hermetic lane), and each must still exist.
qemu_limits=(
  # qemu-user runs the vfork of glibc's posix_spawn as a fork, so an exec that fails is not
  # reported back: posix_spawnp returns 0 and the child exits 127, where a real kernel gives
  # ENOENT (a 10-line static C program: ENOENT natively, 0 and exit 127 under qemu-aarch64 7.2).
  "local runner: a missing program is an error with a hint"
  # qemu-user answers readlink("/proc/self/exe") with the emulated program but not stat(): there
  # /proc/self/exe is qemu itself, so fs::equivalent(path, "/proc/self/exe") is false (seen in
  # this test under qemu-aarch64 7.2; natively it passes).
  "platform: executable_path is this test binary, on both sides"
)
step_start
tests_bin=$build/tests/rv_tests_core_slurm
readelf -h "$tests_bin" | grep -q 'AArch64' || die "$tests_bin is not an aarch64 program"
exclude=""
for name in "${qemu_limits[@]}"; do
  # doctest splits a filter at commas: a comma in a name is escaped (\,)
  filter=${name//,/\\,}
  "$qemu" "$tests_bin" --list-test-cases --test-case="$filter" | grep -qxF "$name" ||
    die "no test case '$name' (left out under qemu in scripts/ci_aarch64.sh): remove it from qemu_limits"
  log "not run under qemu (the emulator's limit; runs natively): $name"
  exclude+=${exclude:+,}$filter
done
report=$(mktemp /tmp/rv-aarch64-unit-XXXXXX.xml)
unit_rc=0
(cd "$build/tests" && "$qemu" "$tests_bin" --reporters=xml --out="$report" ${exclude:+"--test-case-exclude=$exclude"} </dev/null) ||
  unit_rc=$?
summary=$(python3 - "$report" "${#qemu_limits[@]}" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = failed = 0
skipped, failures = [], []
for tc in root.iter("TestCase"):
    res = tc.find("OverallResultsAsserts")
    if res is None:
        continue
    cases += 1
    name = tc.get("name")
    if int(res.get("failures", "0")) > 0 or res.get("test_case_success") == "false":
        failed += 1
        failures.append(name)
    elif any("RV-TEST-SKIPPED:" in (t.text or "") for t in tc.iter("Text")):
        skipped.append(name)
print(f"{cases} test cases: {cases - failed - len(skipped)} passed, {failed} failed, {len(skipped)} skipped, {sys.argv[2]} left out")
for n in failures:
    print(f"  failed: {n}")
for n in skipped:
    print(f"  skipped: {n}")
EOF
) || die "no readable test report from rv_tests_core_slurm (exit $unit_rc)" "the report: $report"
log "unit tests of core/ and slurm/ under qemu (aarch64): $summary"
((unit_rc == 0)) || die "unit tests failed under qemu (exit $unit_rc); the XML report: $report"
rm -f "$report"
step_end "unit (rv_tests_core_slurm under qemu)"

# 3. The tarball, and its rv in every root. The testbed comes up beside this lane in CI.
step_start
wait_s=${RV_AARCH64_TESTBED_WAIT_S:-900}
waited=$(tb_now)
while ! tb_is_up || { [[ ${RV_CLUSTERS:-2} == 2 ]] && ! tb2_root_ok; }; do
  if awk -v s="$(tb_since "$waited")" -v w="$wait_s" 'BEGIN { exit !(s >= w) }'; then
    log "the testbed (cluster 1, cluster 2's root) is not up after $wait_s s: test_release.sh says what is missing"
    break
  fi
  sleep 5
done
RV_RELEASE_JOBS=0 bash "$RV_ROOT/tests/package/test_release.sh" "$tarball" ||
  die "tests/package/test_release.sh failed for $(basename "$tarball")"
step_end "package (the tarball; rv in 4 roots under qemu)"
log "passed in $(tb_since "$lane_t0") s: $(basename "$tarball") and its .sha256 in $(dirname "$tarball")"
