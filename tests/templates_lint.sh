#!/bin/bash
# Lints every template golden file (each is a rendered script) with `bash -n` and
# `shellcheck -s bash`. Regenerate the goldens first with
#   RV_UPDATE_GOLDEN=1 ./build/tests/rv_tests -tc='templates: every*'
# Usage: tests/templates_lint.sh [golden files...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
  set -- "$here"/data/templates/*.sbatch.golden
fi
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "templates_lint: shellcheck is not installed (apt-get install -y shellcheck)" >&2
  exit 1
fi
failed=0
for f in "$@"; do
  if ! bash -n "$f"; then
    echo "FAIL bash -n: $f" >&2
    failed=1
  fi
  if ! shellcheck -s bash "$f"; then
    echo "FAIL shellcheck: $f" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "templates_lint: $# scripts pass bash -n and shellcheck"
exit "$failed"
