#!/usr/bin/env bash
# Build what is missing, make sure the testbed's two clusters run (22.05; 24.11 unless
# RV_CLUSTERS=1), run the tests of a lane with ctest and print the counts. A cluster this script
# started is stopped at the end; one that was already running is left alone.
#
#   scripts/test.sh [CTEST ARGS...]           the hermetic lane and the cluster lane (every test but
#                                             the bench lane's)
#   scripts/test.sh --bench [CTEST ARGS...]   the bench lane: the time-to-GPU smoke on cluster 1, then
#                                             every fuzz target for RV_BENCH_FUZZ_SECONDS (60) each
#
# The lanes (docs/testing.md): hermetic (label hermetic: unit tests, fuzz seeds, lints, goldens,
# package; no cluster, any order, ctest -j), cluster (label cluster: the integration scripts, each
# holding its cluster shared or exclusive as it declares), bench (label bench, and the fuzzers).
# The cluster lane starts as soon as rv and the template renderer are built: it mostly waits on
# Slurm, so the rest of the build (the unit tests) and then the hermetic lane run beside it at low
# priority (nice 10). Arguments go to every ctest run: `scripts/test.sh -R 'test_window|lint'`.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench=0
if [[ ${1:-} == --bench ]]; then
  bench=1
  shift
fi
[[ $(id -u) == 0 ]] || { rv_log "error: run as root (integration tests need the local testbed)"; exit 1; }
t0=$(tb_now)
rv_install_deps_if_needed
rv_build "${RV_INTEGRATION_TARGETS[@]}"
trap rv_testbed_down_if_started EXIT
rv_testbed_up
((bench == 1)) || rv_testbed2_up

work=$(mktemp -d /tmp/rv-ctest-XXXXXX)
it_rc=0 rest_rc=0 junits=() flaky=()
if ((bench == 1)); then
  junits=("$work/bench.xml")
  ctest --test-dir "$RV_BUILD_DIR" -L bench --output-on-failure --output-junit "$work/bench.xml" "$@" </dev/null ||
    it_rc=$?
  if ! command -v "${RV_FUZZ_CXX:-clang++-16}" >/dev/null; then
    rv_log "apt-get install ${RV_FUZZ_PACKAGES[*]} for the fuzzers"
    tb_apt_install "${RV_FUZZ_PACKAGES[@]}"
  fi
  echo "---- every fuzz target for ${RV_BENCH_FUZZ_SECONDS:-60} s (scripts/fuzz.sh) ----"
  bash "$RV_ROOT/scripts/fuzz.sh" "${RV_BENCH_FUZZ_SECONDS:-60}" || rest_rc=$?
else
  junits=("$work/cluster.xml" "$work/hermetic.xml")
  # package.release (cluster lane) tests the static release tarball: its build (~14 min of CPU) and
  # the Debian 11 root it runs in start now, at low priority, so that the test, which holds
  # cluster 1 alone, finds them made (each waits on the other's lock: scripts/release.sh,
  # tests/package/roots.sh).
  nice -n 15 bash "$RV_ROOT/scripts/release.sh" >"$work/release.log" 2>&1 &
  release_pid=$!
  nice -n 10 bash "$RV_ROOT/tests/package/roots.sh" bullseye >"$work/roots.log" 2>&1 &
  roots_pid=$!
  # The cluster lane: each cluster's exclusive tests one after another, its shared ones together,
  # the two clusters at once (ctest's resources, tests/CMakeLists.txt): -j4 (RV_TEST_JOBS).
  ctest --test-dir "$RV_BUILD_DIR" -L cluster -j "${RV_TEST_JOBS:-4}" --output-on-failure \
    --output-junit "$work/cluster.xml" "$@" </dev/null &
  it_pid=$!
  {
    nice -n 10 cmake --build "$RV_BUILD_DIR" &&
      nice -n 10 ctest --test-dir "$RV_BUILD_DIR" -L hermetic -j 2 --output-on-failure \
        --output-junit "$work/hermetic.xml" "$@" </dev/null
  } >"$work/hermetic.log" 2>&1 || rest_rc=$?
  wait "$it_pid" || it_rc=$?
  # A cluster test that failed is run once more, alone (at most 3 of them: more is no flake). One
  # that passes then is reported FLAKY, with its first failure's last lines, and does not fail the
  # run; one that fails again does. docs/testing.md, "A test that failed once".
  if ((it_rc != 0)) && [[ ${RV_TEST_RERUN:-1} == 1 && -f $work/cluster.xml ]]; then
    mapfile -t first_failed < <(python3 "$RV_ROOT/scripts/junit_failures.py" --names "$work/cluster.xml")
    if ((${#first_failed[@]} > 0 && ${#first_failed[@]} <= 3)); then
      rerun_re="^($(IFS='|'; echo "${first_failed[*]//./\\.}"))\$"
      echo "---- run again, alone: ${first_failed[*]} ----"
      if ctest --test-dir "$RV_BUILD_DIR" -R "$rerun_re" --output-on-failure \
        --output-junit "$work/rerun.xml" </dev/null &&
        (($(grep -o 'status="run"' "$work/rerun.xml" | wc -l) == ${#first_failed[@]})); then # skipped is not passed
        flaky=("${first_failed[@]}")
        it_rc=0
      fi
    fi
  fi
  # Failures of these show in package.release itself (it builds, or makes the root, again).
  wait "$release_pid" || { echo "---- scripts/release.sh (beside the tests) failed ----"; cat "$work/release.log"; }
  wait "$roots_pid" || { echo "---- the Debian 11 root (beside the tests) failed ----"; cat "$work/roots.log"; }
  echo "---- the build of the rest and the hermetic lane (beside the cluster lane) ----"
  cat "$work/hermetic.log"
  if [[ ! -f $work/hermetic.xml ]]; then
    rv_log "error: the rest of the build failed (exit $rest_rc): no unit test ran"
    rest_rc=1
  fi
fi

# The junit summaries: <testsuite ... tests="N" failures="F" ... skipped="S" ...>
attr() { sed -n "s/.* $1=\"\\([0-9]*\\)\".*/\\1/p" <<<"$summary"; }
total=0 failed=0 skipped=0 skipped_names=""
for junit in "${junits[@]}"; do
  [[ -f $junit ]] || continue
  summary=$(tr '\n\t' '  ' <"$junit" | grep -m1 -o '<testsuite [^>]*>' || true)
  n=$(attr tests) f=$(attr failures) s=$(attr skipped)
  total=$((total + ${n:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
  # Name what was skipped: a skip is not a pass (docs/testing.md).
  skipped_names+=$(tr '\n\t' '  ' <"$junit" | grep -o '<testcase name="[^"]*"[^>]*status="notrun"' |
    sed 's/<testcase name="\([^"]*\)".*/\1/; s/&apos;/'"'"'/g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' || true)
  skipped_names+=$'\n'
done
failed=$((failed - ${#flaky[@]}))
report() {
  printf 'tests: %s total, %s passed, %s failed, %s skipped (%s s)\n' "$total" \
    "$((total - failed - skipped))" "$failed" "$skipped" "$(tb_since "$t0")"
  for name in "${flaky[@]}"; do
    printf '  FLAKY: %s failed, then passed when run again alone (its first failure is above)\n' "$name"
  done
  while IFS= read -r name; do [[ -z $name ]] || printf '  skipped: %s\n' "$name"; done <<<"$skipped_names"
}
report
# RV_TEST_FAILURES names a file for the summary and a brief digest of what failed (each failed
# test's last lines): .ci/run prints it last, since a CI service keeps only a log's tail.
if [[ -n ${RV_TEST_FAILURES:-} ]]; then
  existing=()
  for junit in "${junits[@]}"; do [[ ! -f $junit ]] || existing+=("$junit"); done
  {
    report
    ((it_rc == 0)) || echo "  the cluster lane: exit $it_rc"
    ((rest_rc == 0)) || echo "  the build of the rest or the hermetic lane: exit $rest_rc"
    for junit in "${existing[@]}"; do
      title=FAILED
      [[ $junit != "$work/cluster.xml" ]] || ((${#flaky[@]} == 0)) || title="FLAKY (passed when run again alone); its first failure"
      python3 "$RV_ROOT/scripts/junit_failures.py" --title "$title" "$junit" || true
    done
    [[ ! -f $work/rerun.xml ]] || python3 "$RV_ROOT/scripts/junit_failures.py" --title "FAILED again" "$work/rerun.xml" || true
  } >"$RV_TEST_FAILURES"
fi
rm -rf "$work"
((it_rc == 0 && rest_rc == 0)) || exit 1
