#!/usr/bin/env bash
# Build rv if needed, make sure the testbed's two clusters run (22.05; 24.11 unless RV_CLUSTERS=1),
# run every test (unit + integration) with ctest and print the counts. A cluster this script
# started is stopped at the end; one that was already running is left alone.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || { rv_log "error: run as root (integration tests need the local testbed)"; exit 1; }
t0=$(tb_now)
rv_install_deps_if_needed
rv_build
trap rv_testbed_down_if_started EXIT
rv_testbed_up
rv_testbed2_up

junit=$(mktemp /tmp/rv-ctest-XXXXXX.xml)
rc=0
# Two at a time: the integration tests hold the testbed one after another (RESOURCE_LOCK), the
# unit tests and lints run beside them (RV_TEST_JOBS to change it).
ctest --test-dir "$RV_BUILD_DIR" -j "${RV_TEST_JOBS:-2}" --output-on-failure --output-junit "$junit" </dev/null || rc=$?
# The junit summary: <testsuite ... tests="N" failures="F" ... skipped="S" ...>
summary=$(tr '\n\t' '  ' <"$junit" | grep -m1 -o '<testsuite [^>]*>' || true)
# Name what was skipped: a skip is not a pass (docs/testing.md).
skipped_names=$(tr '\n\t' '  ' <"$junit" | grep -o '<testcase name="[^"]*"[^>]*status="notrun"' |
  sed 's/<testcase name="\([^"]*\)".*/\1/; s/&apos;/'"'"'/g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' || true)
rm -f "$junit"
attr() { sed -n "s/.* $1=\"\\([0-9]*\\)\".*/\\1/p" <<<"$summary"; }
total=$(attr tests) failed=$(attr failures) skipped=$(attr skipped)
total=${total:-0} failed=${failed:-0} skipped=${skipped:-0}
printf 'tests: %s total, %s passed, %s failed, %s skipped (%s s)\n' "$total" \
  "$((total - failed - skipped))" "$failed" "$skipped" "$(tb_since "$t0")"
[[ -z $skipped_names ]] || while IFS= read -r name; do printf '  skipped: %s\n' "$name"; done <<<"$skipped_names"
exit "$rc"
