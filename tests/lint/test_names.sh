#!/usr/bin/env bash
# Every unit test case is one ctest test (doctest_discover_tests in tests/CMakeLists.txt), run as
# `rv_tests --test-case=NAME`. A `;` in a TEST_CASE's name is CMake's list separator: the discovered
# name is cut there, the cut name matches no test case, doctest runs none and exits 0, and the test
# "passes" without running (found 2026-11-29: 139 names, 15 % of the unit tests, never ran in CI).
# Usage: test_names.sh [SOURCE_ROOT]   (exit 0: no such name; 1: each one found, one line each)
#        test_names.sh --self-test      (plants one in a copy and expects a failure)
set -euo pipefail

check() {
  python3 - "$1" <<'PY'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
start = re.compile(r'\b(TEST_CASE|TEST_CASE_FIXTURE|TEST_SUITE)\s*\(')
bad = 0
for f in sorted((root / "tests" / "unit").rglob("*.cpp")) + sorted((root / "tests" / "unit").rglob("*.hpp")):
    s = f.read_text(errors="replace")
    for m in start.finditer(s):
        j = m.end()
        if m.group(1) == "TEST_CASE_FIXTURE":
            j = s.index(",", j) + 1
        name = ""
        while True:  # the name: adjacent string literals, as the compiler joins them
            while j < len(s) and s[j] in " \t\r\n":
                j += 1
            if j >= len(s) or s[j] != '"':
                break
            k = j + 1
            while s[k] != '"':
                k += 2 if s[k] == "\\" else 1
            name += s[j + 1:k]
            j = k + 1
        if ";" in name:
            line = s.count("\n", 0, m.start()) + 1
            print(f"{f.relative_to(root)}:{line}: a ';' in the test's name: ctest runs none of it (use ',')")
            bad += 1
sys.exit(1 if bad else 0)
PY
}

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/tests/unit"
  printf 'TEST_CASE("fine: a comma, a colon")\n{\n}\n' >"$tmp/tests/unit/ok.cpp"
  check "$tmp" >/dev/null || { echo "test_names self-test: a clean name was refused" >&2; exit 1; }
  printf 'TEST_CASE("cut: one part; "\n          "another")\n{\n}\n' >"$tmp/tests/unit/bad.cpp"
  if out=$(check "$tmp"); then
    echo "test_names self-test: a ';' in a name was not found" >&2
    exit 1
  fi
  [[ $out == *"tests/unit/bad.cpp:1:"* ]] || { echo "test_names self-test: wrong place: $out" >&2; exit 1; }
  echo "test_names self-test: ok"
  exit 0
fi
check "${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
