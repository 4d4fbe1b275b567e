#!/usr/bin/env bash
# The holder never blocks its loop on one client (security-review-3 S3). Against the testbed's
# login node (rvtb). ~15 s.
# - A stalled pipe (`rv exec -- cat BIG | sleep`, like `rv logs | less`): the next rv command is
#   served at once by the same holder. Before, the holder blocked sending that client its output:
#   the next command found it stale after two 2-s hellos and logged in again (a new holder; on a
#   2FA host, another code).
# - 20 MB both ways through the rsync relay (`rv --internal-ssh-relay SOCKET HOST cat`): all of it
#   comes back. Before, the client blocked sending its stdin while the holder blocked sending it
#   stdout: 0 bytes, both stuck.
# testbed-lock: shared (submits no job, changes no cluster state: its own holder, in its own state and runtime directories)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_CONNECTION_PERSIST=30m
rvh() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
holder() { rvh --json connect --status | jq -r ".connections[0].$1"; }

run rvh connect
assert_rc 0 "rv connect"
pid=$(holder pid)
sock=$(holder socket)

# A client that takes none of its 50 MB for 8 s.
# shellcheck disable=SC2216 # sleep reads nothing: that is the stall
(rvh exec -- head -c 50000000 /dev/zero | sleep 8) &
stalled=$!
sleep 2
start=$(date +%s%N)
run rvh exec echo served
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "0 served" "$RUN_RC $RUN_OUT" "rv exec while another client stalls: $RUN_ERR"
assert_eq "$pid" "$(holder pid)" "the holder serving the next command (another pid: it was replaced)"
((ms < 1500)) || it_fail "rv exec took $ms ms while another client stalled (the holder's loop blocked)"
wait "$stalled" || true

# Both ways at once through the relay.
bytes=$(head -c 20000000 /dev/zero | timeout 60 "$RV" --internal-ssh-relay "$sock" "$TB_HOST" cat | wc -c) || true
assert_eq 20000000 "$bytes" "bytes back through the relay's cat (0: the relay and the holder deadlocked)"
assert_eq "$pid" "$(holder pid)" "the holder after the relay"
pass "a stalled client leaves the holder serving ($ms ms for the next command); 20 MB both ways through the relay"
