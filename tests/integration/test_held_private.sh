#!/usr/bin/env bash
# Where the held connection lives, and what it shows of itself (security-review-3 S7, S8). Against
# the testbed's login node (rvtb). ~5 s.
# - With no XDG_RUNTIME_DIR the socket directory is under rv's own state dir ($RV_STATE_DIR/hold,
#   0700), never a fixed /tmp name that another user could create first (before, /tmp/rv-UID:
#   another user's `mkdir -m700 /tmp/rv-UID` turned holding off).
# - When holding falls back to a direct session, `rv connect` says why (before: "connection_persist
#   is 0" whatever the reason).
# - The holder shows `rv _hold DEST` in ps (/proc/PID/cmdline), nothing of the command line that
#   started it (a secret may be on it), and its working directory is / (it keeps no mount busy).
# testbed-lock: shared (submits no job, changes no cluster state: its own holder, in its own state and runtime directories)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_CONNECTION_PERSIST=30m RV_STATE_DIR=$IT_DIR/state
rvh() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
trap 'env -u XDG_RUNTIME_DIR "$RV" disconnect --all >/dev/null 2>&1 || true; it_cleanup' EXIT

# No XDG_RUNTIME_DIR: the state dir's hold/.
run env -u XDG_RUNTIME_DIR "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" connect
assert_rc 0 "rv connect with no XDG_RUNTIME_DIR"
assert_contains "$RUN_OUT" "holding the connection" "rv connect with no XDG_RUNTIME_DIR holds it"
dir=$(env -u XDG_RUNTIME_DIR "$RV" --json connect --status | jq -r .dir)
assert_eq "$RV_STATE_DIR/hold" "$dir" "the socket directory with no XDG_RUNTIME_DIR"
assert_eq 700 "$(stat -c %a "$dir")" "the socket directory's mode"
compgen -G "$dir/*.sock" >/dev/null || it_fail "no socket in $dir"
env -u XDG_RUNTIME_DIR "$RV" disconnect --all >/dev/null

# A socket directory others may enter: holding is off, and rv connect says why.
mkdir -m 755 "$IT_DIR/open" "$IT_DIR/open/rv"
run env XDG_RUNTIME_DIR="$IT_DIR/open" "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" connect
assert_rc 0 "rv connect with a socket directory others may enter (a direct session)"
assert_contains "$RUN_OUT" "nothing is held: held connection: $IT_DIR/open/rv is not a private directory" \
  "rv connect names the real reason"
assert_not_contains "$RUN_OUT" "connection_persist is 0" "rv connect does not blame connection_persist"

# The holder's command line and working directory.
mkdir "$IT_DIR/work"
run bash -c "cd '$IT_DIR/work' && exec \"\$@\"" _ "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" \
  exec -- echo not-in-ps-4711
assert_eq "0 not-in-ps-4711" "$RUN_RC $RUN_OUT" "rv exec starts a holder: $RUN_ERR"
pid=$("$RV" --json connect --status | jq -r '.connections[0].pid')
[[ $pid =~ ^[0-9]+$ ]] || it_fail "no holder after rv exec"
cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" | sed 's/ *$//')
assert_not_contains "$cmdline" "not-in-ps-4711" "the holder's command line shows the command that started it"
assert_match "$cmdline" "^rv _hold [^ ]+$" "the holder's command line"
assert_eq / "$(readlink "/proc/$pid/cwd")" "the holder's working directory"
pass "no XDG_RUNTIME_DIR: sockets in \$RV_STATE_DIR/hold (0700); a refused directory is named by rv connect; the holder shows '$cmdline' in ps, cwd /"
