#!/usr/bin/env bash
# Slurm job states are typed outside slurm/ (docs/architecture.md): app/, cli/ and the other
# layers compare and store slurm::JobState, and only slurm/ (which parses and names the states)
# and tests/ spell them as text. A literal such as "RUNNING" or "CANCELLED by 0" anywhere else is a
# state matched as a string again: use slurm::JobState, slurm::parse_job_state, slurm::to_string.
# Usage: job_states.sh [SOURCE_ROOT]   (exit 0: the rule holds; 1: violations, one line each)
#        job_states.sh --self-test      (plants a state literal in a copy and expects a failure)
set -euo pipefail

# Slurm's long state names (slurm/job_state.cpp reads them, and the short codes).
states='PENDING|CONFIGURING|RUNNING|COMPLETING|COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL'
states+='|PREEMPTED|BOOT_FAIL|DEADLINE|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|SUSPENDED|STOPPED|SIGNALING'
states+='|STAGE_OUT|RESIZING|SPECIAL_EXIT|REVOKED|RESV_DEL_HOLD|UPDATE_DB|POWER_UP_NODE'
# A whole string literal that is a state, as squeue/sacct print it: "RUNNING", "CANCELLED+",
# "CANCELLED by 0".
pattern="\"($states)(\\+| by [^\"]*)?\""

# Every C++ file of the product outside slurm/.
dirs=(app cli core strategy sync templates fuzz)

check() {
  local root=$1 d
  local -a found=()
  for d in "${dirs[@]}"; do
    [[ -d $root/$d ]] && found+=("$root/$d")
  done
  ((${#found[@]})) || return 0
  # Lines whose code (before any // comment) holds a state literal.
  local hits
  hits=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' "$pattern" "${found[@]}" |
    awk -v root="$root/" '{
      line = $0; sub(root, "", line)
      split(line, parts, ":"); code = substr(line, length(parts[1]) + length(parts[2]) + 3)
      sub(/\/\/.*/, "", code)
      if (code ~ /"('"$states"')(\+| by [^"]*)?"/) print line
    }') || true
  if [[ -n $hits ]]; then
    while IFS= read -r h; do
      printf '%s  <- a Slurm job state as text outside slurm/: use slurm::JobState\n' "$h"
    done <<<"$hits"
    return 1
  fi
  return 0
}

if [[ ${1:-} == --self-test ]]; then
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for d in "${dirs[@]}" slurm; do
    [[ -d $here/$d ]] && cp -r "$here/$d" "$tmp/$d"
  done
  check "$tmp" >/dev/null || { echo "self-test: the tree itself fails" >&2; exit 1; }
  printf 'bool planted(const std::string& s) { return s == "RUNNING"; }\n' >>"$tmp/slurm/job_state.cpp"
  check "$tmp" >/dev/null || { echo "self-test: a literal in slurm/ was refused" >&2; exit 1; }
  printf '// a comment may name "RUNNING"\n' >>"$tmp/app/env.hpp"
  check "$tmp" >/dev/null || { echo "self-test: a literal in a comment was refused" >&2; exit 1; }
  for planted in 'bool planted(const std::string& s) { return s == "RUNNING"; }' \
    'bool planted(const std::string& s) { return s.starts_with("CANCELLED by 0"); }' \
    'const char* planted = "OUT_OF_MEMORY"; // a state'; do
    cp "$tmp/app/env.hpp" "$tmp/app/env.hpp.keep"
    printf '%s\n' "$planted" >>"$tmp/app/env.hpp"
    if check "$tmp" >/dev/null; then
      echo "self-test: not caught: $planted" >&2
      exit 1
    fi
    mv "$tmp/app/env.hpp.keep" "$tmp/app/env.hpp"
  done
  echo "self-test: ok"
  exit 0
fi
check "${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
