#!/usr/bin/env bash
# Second factors and the held connection (#26), on the testbed's second-factor login node
# (`rvtb-2fa`: key, then a TOTP code; docs/testbed.md). Logins are counted on the server side
# (sshd's "Accepted keyboard-interactive/pam" lines). Checks: no terminal and no askpass is a
# clear error (254), not a hang; connection_persist 0 logs in once per command (as before);
# `rv connect` with SSH_ASKPASS logs in once, then 20 commands of every kind (exec, ps, status,
# run -f with a sync, logs, up --run, ssh, forward, gpu, why) run with askpass unset and cause
# no further login; the holder killed while `rv run -f` runs is replaced and the run finishes;
# another local user cannot use the socket; rv disconnect ends it. ~60 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

if [[ -z ${TB_2FA_PORT:-} ]] || ! tb_pid=$(cat "$TB_DIR/sshd-2fa.pid" 2>/dev/null) || ! kill -0 "$tb_pid" 2>/dev/null ||
  ! command -v oathtool >/dev/null; then
  printf '%s: SKIP: the testbed has no second-factor sshd (libpam-oath, oathtool; testbed/up.sh starts it)\n' \
    "$IT_NAME" >&2
  exit 125
fi

export RV_STATE_DIR=$IT_DIR/state
export RV_CONNECTION_PERSIST=30m # lib.sh: holders in $XDG_RUNTIME_DIR/rv, this test's own
unset SSH_ASKPASS SSH_ASKPASS_REQUIRE
NAME=rv-it-login-$$
LOG=$TB_DIR/log/sshd-2fa.log
logins() { grep -c 'Accepted keyboard-interactive/pam for rvtest' "$LOG" || true; }
rv2() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa "$@"; }
cat >"$IT_DIR/askpass" <<ASK
#!/bin/sh
printf '%s\n' "\$1" >>"$IT_DIR/askpass.log"
exec "$TB_TOTP"
ASK
chmod 755 "$IT_DIR/askpass"
with_askpass() { SSH_ASKPASS=$IT_DIR/askpass SSH_ASKPASS_REQUIRE=force "$@"; }
holder_pids() { rv2 --json connect --status | jq -r '.connections[].pid // empty'; }
cleanup_login() {
  local pid ids
  # A background forward keeps the caller's descriptors, the testbed lock included: stop it first.
  for pid in $(jq -r '.pid' "$RV_STATE_DIR"/forwards/*.json 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  for pid in $(holder_pids 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_login; it_cleanup' EXIT

# ---- no terminal, no askpass: the clear error, fast ----
run setsid -w env RV_CONNECTION_PERSIST=0 "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa exec true
assert_rc 254 "no terminal and no askpass"
assert_contains "$RUN_ERR" "asks for a second factor" "the error says what the host wants"
assert_contains "$RUN_ERR" "rv connect" "the hint says how to give it"
assert_faster_than 15 "no hang without a terminal"
run setsid -w "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa exec true
assert_rc 254 "no terminal and no askpass, holding on: same error"
[[ -z $(ls "$XDG_RUNTIME_DIR"/rv/*.sock 2>/dev/null) ]] || it_fail "a failed login left a socket"
pass "no terminal and no askpass: exit 254, 'asks for a second factor' and the hint, in ${RUN_SECS}s"

# ---- connection_persist 0: one login per command, as before ----
before=$(logins)
for i in 1 2; do
  run with_askpass env RV_CONNECTION_PERSIST=0 "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa exec echo "hi $i"
  assert_rc 0 "persist 0: exec $i"
  assert_eq "hi $i" "$RUN_OUT" "persist 0: exec $i output"
done
assert_eq $((before + 2)) "$(logins)" "persist 0: two commands, two logins"
[[ -z $(ls "$XDG_RUNTIME_DIR"/rv/*.sock 2>/dev/null) ]] || it_fail "persist 0 left a holder"
grep -q "One-time password" "$IT_DIR/askpass.log" || it_fail "askpass was not asked the code prompt"
pass "connection_persist 0: a login per command (2 logins), SSH_ASKPASS asked the code, no holder"

# ---- on a terminal (a pty from script(1)): the prompt is shown and the code typed there ----
if command -v script >/dev/null; then
  before=$(logins)
  code=$("$TB_TOTP")
  out=$({ sleep 2; printf "%s\n" "$code"; } | timeout 30 script -qec \
    "env RV_CONNECTION_PERSIST=0 '$RV' --ssh-config '$TB_SSH_CONFIG' --host rvtb-2fa exec echo tty-ok" /dev/null 2>&1 || true)
  assert_contains "$out" "One-time password (OATH) for" "the prompt is shown on the terminal"
  assert_contains "$out" "tty-ok" "the code typed on the terminal logs in"
  assert_not_contains "$out" "$code" "the code is not echoed (the server said echo off)"
  assert_eq $((before + 1)) "$(logins)" "one login from the terminal"
  pass "on a terminal: the code prompt shown, the code typed (not echoed), logged in"
fi

# ---- rv connect: one login; then 20 commands of every kind, askpass unset ----
before=$(logins)
cold_start=$(date +%s%N)
run with_askpass "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa connect
assert_rc 0 "rv connect"
cold_ms=$((($(date +%s%N) - cold_start) / 1000000))
assert_eq $((before + 1)) "$(logins)" "rv connect logs in once"
run rv2 --json connect --status
assert_rc 0 "rv connect --status"
assert_json '.connections | length' 1 "one held connection"
assert_json '.connections[0].label' '"rvtest@127.0.0.1:2223"' "its host"
pass "rv connect: one login with the code from SSH_ASKPASS; --status lists it"

mkdir -p "$IT_DIR/proj"
cd "$IT_DIR/proj" || it_fail "cd"
printf 'print("hello from the project")\n' >hello.py
printf 'import sys\nprint("up", sys.argv[1:])\n' >up.py
count=0
step() { # what, then the command; must succeed
  local what=$1
  shift
  run "$@"
  [[ $RUN_RC == 0 ]] || it_fail "held: $what" "$(it_last_run)"
  count=$((count + 1))
}
t0=$(date +%s%N)
step "exec" rv2 exec true
held_ms=$((($(date +%s%N) - t0) / 1000000))
step "exec with output" rv2 exec echo held
assert_eq "held" "$RUN_OUT" "exec output through the holder"
step "exec through sh" rv2 exec -- sh -c 'echo piped'
step "ps" rv2 ps
step "status" rv2 status
step "run -f with a sync" rv2 run -f --time 5m --name "$NAME-run" -- python3 hello.py
assert_contains "$RUN_OUT$RUN_ERR" "hello from the project" "run -f ran the synced file"
step "logs" rv2 logs "$NAME-run"
step "why" rv2 why "$NAME-run"
step "up --run" rv2 up --time 5m --name "$NAME-up" --run "python3 up.py a b"
assert_contains "$RUN_OUT$RUN_ERR" "up ['a', 'b']" "up --run ran the command"
step "run (background) for ssh and forward" rv2 run --time 5m --name "$NAME-bg" -- sleep 120
wait_for 60 bash -c "squeue -h -n '$NAME-bg' -o %T | grep -q RUNNING"
step "ssh" rv2 ssh "$NAME-bg" -- echo on-node
assert_contains "$RUN_OUT" "on-node" "rv ssh through the holder"
step "gpu of a request" rv2 gpu "$NAME-bg"
step "gpu (the newest running request)" rv2 gpu
step "logs of the running request" rv2 logs "$NAME-bg"
step "forward --list" rv2 forward --list
LPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
step "forward" rv2 forward "$TB_SSH_PORT" "$NAME-bg" --local-port "$LPORT"
banner=$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$LPORT; head -c 7 <&3" || true)
assert_eq "SSH-2.0" "$banner" "a byte stream through the forward's channel"
step "forward --stop" rv2 forward --stop "$LPORT"
printf 'changed\n' >new.txt
step "sync push (rsync through the holder)" env RV_SYNC_TRANSPORT=rsync "$RV" --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa -v sync push
assert_contains "$RUN_ERR$RUN_OUT" "via rsync" "the sync went by rsync"
step "exec again" rv2 exec hostname
step "status again" rv2 status
step "ps again" rv2 ps
((count >= 20)) || it_fail "only $count commands"
assert_eq $((before + 1)) "$(logins)" "$count commands after rv connect: still exactly one login"
pass "$count commands of every kind (exec, ps, status, run -f + sync, logs, why, up --run, ssh, gpu, forward) after one login: 1 counted by sshd; exec true ${held_ms} ms held (rv connect ${cold_ms} ms)"

# ---- the holder killed during rv run -f, twice: while the race waits for a start (a poll or the
# login node's wait in flight, nearly always) and while the job runs (the follow's reads and
# waits): each time replaced (one more login), the command in flight asked again, the run finishes.
before=$(logins)
with_askpass "$RV" -v --ssh-config "$TB_SSH_CONFIG" --host rvtb-2fa run -f --time 5m --name "$NAME-kill" -- \
  'sleep 6; echo finished-after-kill' </dev/null >"$IT_DIR/kill.out" 2>"$IT_DIR/kill.err" &
runner=$!
# After the submission (sbatch is never repeated: a kill during it is a failed submission), in the race.
wait_for 60 grep -q "waiting for the first of" "$IT_DIR/kill.err"
for pid in $(holder_pids); do kill -9 "$pid"; done
wait_for 60 bash -c "squeue -h -n '$NAME-kill' -o %T | grep -q RUNNING"
for _ in $(seq 150); do [[ -z $(holder_pids) ]] || break; sleep 0.2; done
for pid in $(holder_pids); do kill -9 "$pid"; done
rc=0
wait "$runner" || rc=$?
[[ $rc == 0 ]] || it_fail "rv run -f after the holder was killed: exit $rc" "$(cat "$IT_DIR/kill.err")"
grep -q finished-after-kill "$IT_DIR/kill.out" || it_fail "the run's output is missing" "$(cat "$IT_DIR/kill.out")"
[[ -n $(holder_pids) ]] || it_fail "no new holder after the kill"
pass "holder killed (SIGKILL) twice during rv run -f (race, follow): replaced ($(($(logins) - before)) new logins), the run finished"

# ---- another local user cannot use the socket ----
sock=$(find "$XDG_RUNTIME_DIR/rv" -name '*.sock' | head -1)
as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("refused", e.errno); sys.exit()
req = json.dumps({"op": "hello"}).encode()
try:
    s.sendall(b"R" + struct.pack(">I", len(req)) + req)
    got = s.recv(100)
except OSError as e:  # the holder closed at once: EPIPE or ECONNRESET
    got = b""
print("answered" if got else "closed without an answer")' "$1" 2>&1 || true
}
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null && [[ -x /usr/bin/python3 ]]; then
  out=$(as_nobody "$sock")
  assert_contains "$out" "refused 13" "user nobody cannot reach $sock (0700 directory)"
  # With the directory opened up, the holder itself refuses the peer's uid (SO_PEERCRED).
  chmod 755 "$IT_DIR" "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/rv" && chmod 666 "$sock"
  out2=$(as_nobody "$sock")
  chmod 700 "$IT_DIR" "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/rv" && chmod 600 "$sock"
  assert_eq "closed without an answer" "$out2" "the holder refuses another uid"
  grep -q "refused a client of uid $(id -u nobody)" "${sock%.sock}.log" || it_fail "the holder's log does not say it refused"
  pass "another local user: the 0700 directory refuses it (EACCES), and with it opened the holder drops its uid (SO_PEERCRED)"
fi

# ---- rv disconnect ----
run rv2 connect --status
assert_match "$RUN_OUT" "rvtb-2fa +rvtest@127.0.0.1:$TB_2FA_PORT " "the status names the holder by its alias and its address"
# Named by its alias without the --ssh-config it was made with (N12: "no held connection to end").
run "$RV" --host rvtb-2fa disconnect
assert_rc 0 "rv disconnect ALIAS"
assert_contains "$RUN_OUT" "ended 1 held connection" "the holder made with another ssh config is found by its alias"
wait_for 10 bash -c "[[ -z \$(ls '$XDG_RUNTIME_DIR'/rv/*.sock 2>/dev/null) ]]"
pass "rv disconnect ALIAS ends the holder (made with another ssh config) and removes its socket"
