#!/usr/bin/env bash
# A holder found stale and replaced never removes its successor's socket (security-review-3 S3):
# the holder is stopped (SIGSTOP, as a stalled pipe or a suspended laptop process does), the next
# command finds it stale (two 2-s hellos unanswered), removes its socket and starts a new holder;
# the old one, resumed, idles out and ends. Before, its exit removed the new holder's socket: the
# new holder lived on, unlisted by `rv connect --status` and unreachable by `rv disconnect`, and the
# next command logged in once more. The replaced holder (it did not answer two hellos) is ended
# as it is replaced, so it does not keep its session open on the server. Against the testbed's
# login node (rvtb). ~20 s.
# testbed-lock: shared (submits no job, changes no cluster state: its own holder, in its own runtime directory)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_CONNECTION_PERSIST=6s
rvh() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
holder_pids() { rvh --json connect --status | jq -r '.connections[] | select(.stale | not) | .pid'; }
old="" new=""
trap 'it_cleanup; [[ -z $old ]] || kill -CONT "$old" 2>/dev/null || true' EXIT

run rvh connect
assert_rc 0 "rv connect"
old=$(holder_pids)
[[ -n $old ]] || it_fail "no holder after rv connect"
kill -STOP "$old"
run rvh exec echo replaced
assert_eq "0 replaced" "$RUN_RC $RUN_OUT" "rv exec with the holder stopped: $RUN_ERR"
new=$(holder_pids)
[[ -n $new && $new != "$old" ]] || it_fail "no new holder after the old one was found stale (holders: $new)"
sock=$(rvh --json connect --status | jq -r '.connections[0].socket')
# The stopped holder was ended as it was replaced (SIGTERM, then SIGCONT): its session closed, not
# left logged in on the server until someone resumes it.
for _ in $(seq 1 25); do
  kill -0 "$old" 2>/dev/null || break
  sleep 0.2
done
! kill -0 "$old" 2>/dev/null || it_fail "the replaced holder ($old) still runs 5 s on: it was not ended when replaced"
kill -CONT "$old" 2>/dev/null || true
# The old holder idles out (6 s); commands meanwhile keep the new one busy, so it outlives the old.
for _ in $(seq 1 40); do
  kill -0 "$old" 2>/dev/null || break
  rvh exec true >/dev/null 2>&1 || it_fail "rv exec while the old holder idles out"
  sleep 0.5
done
! kill -0 "$old" 2>/dev/null || it_fail "the resumed old holder ($old) did not end"
old=""
[[ -S $sock ]] || it_fail "the old holder removed the new holder's socket $sock on its way out"
assert_eq "$new" "$(holder_pids)" "rv connect --status lists the new holder (another pid: its socket was removed, a third login)"
run rvh exec echo still
assert_eq "0 still $new" "$RUN_RC $RUN_OUT $(holder_pids)" "the next command uses the new holder"
pass "a stopped holder, replaced, ends without removing its successor's socket (new holder $new still listed and used)"
