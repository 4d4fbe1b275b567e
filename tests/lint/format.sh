#!/usr/bin/env bash
# Every C++ file is formatted as .clang-format says (clang-format 16, Debian 12's clang-format-16).
# Usage: format.sh [SOURCE_ROOT] [--fix]. Exit 0: formatted; 1: files to reformat (listed);
# 125: clang-format-16 is missing (a skip; under CI=true a failure, since .ci/run installs it).
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
fix=${2:-}
cf=${CLANG_FORMAT:-clang-format-16}
if ! command -v "$cf" >/dev/null; then
  if [[ ${CI:-} == true ]]; then
    echo "format: $cf is missing in CI (scripts/lib.sh installs it)" >&2
    exit 1
  fi
  echo "format: SKIP: $cf is not installed (apt-get install clang-format-16)" >&2
  exit 125
fi
cd "$root"
mapfile -t files < <(find core slurm strategy templates sync app cli bench fuzz tests -name '*.cpp' -o -name '*.hpp' 2>/dev/null | sort)
if [[ $fix == --fix ]]; then
  "$cf" -i "${files[@]}"
  echo "format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'format: %d of %d files differ from .clang-format (fix: bash tests/lint/format.sh . --fix):\n' "${#bad[@]}" "${#files[@]}" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says"
