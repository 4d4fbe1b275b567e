#!/usr/bin/env bash
# tests/fault/check.py finds a leftover secrets file where the login node has it: under HOME for a
# record's "~/" path, and, on the testbed's cluster 2 (its login node runs in a root, TB_ROOT),
# under that root for a record's absolute path (rv records remote_root as the login node resolved
# it, /home/rvtest/.rv-...). Before TB_ROOT was read, every secrets check of a cluster 2 campaign
# looked on the host and passed whatever was left. No cluster needed.
set -euo pipefail
CHECK=$(cd "$(dirname "$0")" && pwd)/check.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { printf 'test_check: FAIL: %s\n' "$*" >&2; exit 1; }

root=$t/root home=/home/u
mkdir -p "$t/state/requests" "$root$home/.rv-abs/requests/r1" "$root$home/.rv-tilde/requests/r2"
touch "$root$home/.rv-abs/requests/r1/env" "$root$home/.rv-tilde/requests/r2/env" "$t/squeue"
record() { # ID REMOTE_ROOT
  printf '{"id": "%s", "name": "run-x", "state": "done", "remote_root": "%s", "secrets_file": "", "jobs": []}\n' \
    "$1" "$2" >"$t/state/requests/$1.json"
}
record r1 "$home/.rv-abs"
# shellcheck disable=SC2088  # as rv records it, for the login node to resolve
record r2 "~/.rv-tilde"

out=$(TB_ROOT=$root python3 "$CHECK" final "$t/state" run-x "$t/squeue" "$root$home")
[[ $out == *"request r1 (done) left its secrets file $root$home/.rv-abs/requests/r1/env"* ]] ||
  fail "an absolute remote_root is not read under TB_ROOT: $out"
[[ $out == *"request r2 (done) left its secrets file $root$home/.rv-tilde/requests/r2/env"* ]] ||
  fail "a ~/ remote_root is not read under HOME: $out"

# Cluster 1 (no TB_ROOT): an absolute path is the host's own.
out=$(env -u TB_ROOT python3 "$CHECK" final "$t/state" run-x "$t/squeue" "$root$home")
[[ $out != *"request r1"* ]] || fail "without TB_ROOT an absolute path must be read as it is: $out"
rm "$root$home/.rv-abs/requests/r1/env" "$root$home/.rv-tilde/requests/r2/env"
out=$(TB_ROOT=$root python3 "$CHECK" final "$t/state" run-x "$t/squeue" "$root$home")
[[ -z $out ]] || fail "no secrets file left, yet: $out"
printf 'test_check: ok\n'
