#!/usr/bin/env bash
# The held connection's spare channel (docs/ssh.md, "A channel opened ahead"), on a private sshd
# of this test (the testbed's user, keys and host key; its own port, MaxSessions 3; no Slurm):
# the holder opens a spare after its login and after each command takes it; 8 commands at once
# (beyond MaxSessions: the spare's refill is refused, the queue waits) all run, with their own
# output, on one session; a refused channel no longer closes another command's channel (libssh
# 0.10 sent the close to remote channel 0: "close packet referred to nonexistent channel 0",
# the session ended); the spare of a holder whose connection went away is not used: the next
# command gets a new holder; the session's socket has TCP_NODELAY; back-to-back commands at a
# 200 ms round trip (a latency proxy of its own) pay one round trip each. The WAN proxy's drop of a
# held connection: test_netpaths.sh. ~10 s.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ -x /usr/sbin/sshd && -r $TB_DIR/ssh/ssh_host_ed25519_key ]] ||
  { printf '%s: SKIP: no sshd or no testbed host key\n' "$IT_NAME" >&2 && exit 125; }
export RV_CONNECTION_PERSIST=30m
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tb_sshd_config "$TB_DIR" "$port" | grep -v '^PidFile' >"$IT_DIR/sshd_config"
sshd_pid="" wan_pid=""
# it_cleanup first: it reads the test's exit status (a failed test keeps its files, sshd.log too).
trap 'it_cleanup; for p in $sshd_pid $wan_pid; do kill "$p" 2>/dev/null || true; done' EXIT
/usr/sbin/sshd -f "$IT_DIR/sshd_config" -o PidFile="$IT_DIR/sshd.pid" -o MaxSessions=3 -E "$IT_DIR/sshd.log"
wait_for 10 test -s "$IT_DIR/sshd.pid"
sshd_pid=$(cat "$IT_DIR/sshd.pid")
printf '[127.0.0.1]:%s %s\n' "$port" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")" >"$IT_DIR/known_hosts"
tb_ssh_host spare "$TB_DIR" "$port" | sed "s|UserKnownHostsFile .*|UserKnownHostsFile $IT_DIR/known_hosts|" \
  >"$IT_DIR/ssh_config"
rvs() { "$RV" --ssh-config "$IT_DIR/ssh_config" --host spare "$@"; }
status() { rvs --json connect --status | jq -c ".connections[0] | $1"; }
spare_ready() { [[ $(status .spare) == true ]]; }

# ---- one spare after the login, a new one after each command takes it ----
run rvs connect
assert_rc 0 "rv connect"
wait_for 5 spare_ready
run rvs exec echo one
assert_eq "0 one" "$RUN_RC $RUN_OUT" "a command on the spare"
assert_eq 1 "$(status .spare_used)" "the command took the spare"
wait_for 5 spare_ready
run rvs exec echo two
assert_eq "0 two 2" "$RUN_RC $RUN_OUT $(status .spare_used)" "the next command took the next spare"
pass "the holder keeps a spare channel open; each command takes it and a new one is opened"

# ---- 8 at once, MaxSessions 3: all run with their own output, on the same session ----
pid=$(status .pid)
for i in 1 2 3 4 5 6 7 8; do
  (rvs exec "echo c$i; sleep 0.3" >"$IT_DIR/c$i.out" 2>"$IT_DIR/c$i.err" && echo ok >"$IT_DIR/c$i.rc") &
done
wait
for i in 1 2 3 4 5 6 7 8; do
  assert_eq "c$i ok" "$(cat "$IT_DIR/c$i.out") $(cat "$IT_DIR/c$i.rc" 2>/dev/null)" \
    "command $i of 8 at once: $(cat "$IT_DIR/c$i.err")"
done
assert_eq "$pid" "$(status .pid)" "the same holder served them"
assert_not_contains "$(cat "$IT_DIR/sshd.log")" "nonexistent channel" "no close for a channel that never opened"
assert_eq 1 "$(grep -c "Accepted publickey for $TB_SSH_USER" "$IT_DIR/sshd.log")" "one login for all"
pass "8 commands at once beyond MaxSessions 3: each ran once with its output, on one session (spare used $(status .spare_used)x)"

# ---- the server goes away: the spare of the dead session is not used, a new holder takes over ----
wait_for 5 spare_ready
for child in $(pgrep -P "$sshd_pid"); do kill "$child"; done # this test's sshd's sessions
run rvs exec echo after
assert_eq "0 after" "$RUN_RC $RUN_OUT" "after the server ended the held session"
assert_eq 2 "$(grep -c "Accepted publickey for $TB_SSH_USER" "$IT_DIR/sshd.log")" "a new login"
pass "the server ended the held session: the next command logged in again (${RUN_SECS}s)"

# ---- TCP_NODELAY on the session's socket (else a small packet after another waits 40 ms for the
# server's delayed ACK: back-to-back commands through the holder took 45 ms instead of 14) ----
if command -v strace >/dev/null; then
  run env RV_CONNECTION_PERSIST=0 strace -f -e trace=setsockopt -o "$IT_DIR/strace" "$RV" --ssh-config "$IT_DIR/ssh_config" \
    --host spare exec true
  assert_rc 0 "rv exec under strace"
  assert_contains "$(cat "$IT_DIR/strace")" "TCP_NODELAY, [1]" "the session's socket has TCP_NODELAY"
  pass "the session's socket sets TCP_NODELAY"
else
  printf '%s: SKIP: TCP_NODELAY check: no strace\n' "$IT_NAME" >&2
fi

# ---- at a distance: through a latency proxy of this test's own (the testbed's wan_proxy.py) at a
# 200 ms round trip, back-to-back commands through the holder pay one round trip each: the spare
# is open (its successor's open went out with the exec). Before: two (channel open, exec). ----
if [[ -r $TB_DIR/bin/wan_proxy.py ]]; then
  mkdir -p "$IT_DIR/wan" && echo 200 >"$IT_DIR/wan/rtt_ms"
  wport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 "$TB_DIR/bin/wan_proxy.py" "$wport" "$port" "$IT_DIR/wan" "$IT_DIR/wan/pid" >"$IT_DIR/wan/log" 2>&1 &
  wan_pid=$!
  wait_for 10 test -s "$IT_DIR/wan/pid"
  sed "s|Port $port|Port $wport|; s|^Host spare|Host spare-wan|" <(tb_ssh_host spare "$TB_DIR" "$port") |
    sed "s|UserKnownHostsFile .*|UserKnownHostsFile $IT_DIR/known_hosts|" >>"$IT_DIR/ssh_config"
  printf '[127.0.0.1]:%s %s\n' "$wport" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")" >>"$IT_DIR/known_hosts"
  rvw() { "$RV" --ssh-config "$IT_DIR/ssh_config" --host spare-wan "$@"; }
  run rvw connect
  assert_rc 0 "rv connect through the proxy"
  times=()
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    rvw exec true </dev/null || it_fail "rv exec true $i through the proxy"
    times+=($((($(date +%s%N) - t0) / 1000000)))
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  ((median < 350)) || it_fail "back-to-back rv exec true at 200 ms: median ${median} ms (${times[*]}), want < 350 (1 RTT + 150)"
  pass "rv exec true back-to-back through the holder at a 200 ms round trip: ${times[*]} ms (median ${median}, 1 RTT)"
fi
