#!/usr/bin/env bash
# Build rv if needed, make sure the testbed's two clusters run (22.05; 24.11 unless RV_CLUSTERS=1),
# run every test (unit + integration) with ctest and print the counts. A cluster this script
# started is stopped at the end; one that was already running is left alone.
#
# The integration tests (ctest -L integration) start as soon as rv and the template renderer are
# built: they mostly wait on Slurm, so the rest of the build (the unit tests, about a third of it)
# and then the unit tests, lints and package check run beside them at low priority (nice 10).
# Arguments go to both ctest runs: `scripts/test.sh -R 'test_window|lint'` runs a subset.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || { rv_log "error: run as root (integration tests need the local testbed)"; exit 1; }
t0=$(tb_now)
rv_install_deps_if_needed
rv_build "${RV_INTEGRATION_TARGETS[@]}"
trap rv_testbed_down_if_started EXIT
rv_testbed_up
rv_testbed2_up

work=$(mktemp -d /tmp/rv-ctest-XXXXXX)
# Each cluster's tests one after another (RESOURCE_LOCK testbed / testbed2), the two clusters at
# once: -j2 (RV_TEST_JOBS to change it).
it_rc=0
ctest --test-dir "$RV_BUILD_DIR" -L integration -j "${RV_TEST_JOBS:-2}" --output-on-failure \
  --output-junit "$work/integration.xml" "$@" </dev/null &
it_pid=$!
rest_rc=0
{
  nice -n 10 cmake --build "$RV_BUILD_DIR" &&
    nice -n 10 ctest --test-dir "$RV_BUILD_DIR" -LE integration -j 2 --output-on-failure \
      --output-junit "$work/rest.xml" "$@" </dev/null
} >"$work/rest.log" 2>&1 || rest_rc=$?
wait "$it_pid" || it_rc=$?
echo "---- the build of the rest, the unit tests, lints and package check (beside the integration tests) ----"
cat "$work/rest.log"
if [[ ! -f $work/rest.xml ]]; then
  rv_log "error: the rest of the build failed (exit $rest_rc): no unit test ran"
  rest_rc=1
fi

# The junit summaries: <testsuite ... tests="N" failures="F" ... skipped="S" ...>
attr() { sed -n "s/.* $1=\"\\([0-9]*\\)\".*/\\1/p" <<<"$summary"; }
total=0 failed=0 skipped=0 skipped_names=""
for junit in "$work/integration.xml" "$work/rest.xml"; do
  [[ -f $junit ]] || continue
  summary=$(tr '\n\t' '  ' <"$junit" | grep -m1 -o '<testsuite [^>]*>' || true)
  n=$(attr tests) f=$(attr failures) s=$(attr skipped)
  total=$((total + ${n:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
  # Name what was skipped: a skip is not a pass (docs/testing.md).
  skipped_names+=$(tr '\n\t' '  ' <"$junit" | grep -o '<testcase name="[^"]*"[^>]*status="notrun"' |
    sed 's/<testcase name="\([^"]*\)".*/\1/; s/&apos;/'"'"'/g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' || true)
  skipped_names+=$'\n'
done
rm -rf "$work"
printf 'tests: %s total, %s passed, %s failed, %s skipped (%s s)\n' "$total" \
  "$((total - failed - skipped))" "$failed" "$skipped" "$(tb_since "$t0")"
while IFS= read -r name; do [[ -z $name ]] || printf '  skipped: %s\n' "$name"; done <<<"$skipped_names"
((it_rc == 0 && rest_rc == 0)) || exit 1
