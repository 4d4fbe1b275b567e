#!/usr/bin/env bash
# Never run twice (docs/ssh.md, "Never run twice"; security-review-3 S2): a command whose exec
# reached the login node but whose answer never came back is not sent again. Through a latency
# proxy of this test's own (the testbed's wan_proxy.py, 4 s round trip) in front of a private sshd
# (the testbed's user, keys and host key; no Slurm), `rv exec -- sh -c 'echo ran >> FILE'` is cut
# off as soon as FILE has its line, before the exec's answer is back: (a) the holder is SIGKILLed,
# (b) the proxy resets the connection (a Wi-Fi or VPN change). Each time FILE keeps one line and rv
# exits 255 saying the command may have run. Before the fix rv started a new holder and ran it
# again (exit 0, two lines). (c) rv disconnect while a command runs warns, and the command ends
# "may have run" (S4). ~15 s.
# testbed-lock: shared (submits no job, changes no cluster state: its own holder, in its own runtime directory)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

[[ -x /usr/sbin/sshd && -r $TB_DIR/ssh/ssh_host_ed25519_key && -r $TB_DIR/bin/wan_proxy.py ]] ||
  { printf '%s: SKIP: no sshd, testbed host key or wan_proxy.py\n' "$IT_NAME" >&2 && exit 125; }
export RV_CONNECTION_PERSIST=30m
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
tb_sshd_config "$TB_DIR" "$port" | grep -v '^PidFile' >"$IT_DIR/sshd_config"
sshd_pid="" wan_pid=""
# it_cleanup first: it reads the test's exit status (a failed test keeps its files, sshd.log too).
trap 'it_cleanup; for p in $sshd_pid $wan_pid; do kill "$p" 2>/dev/null || true; done' EXIT
/usr/sbin/sshd -f "$IT_DIR/sshd_config" -o PidFile="$IT_DIR/sshd.pid" -E "$IT_DIR/sshd.log"
wait_for 10 test -s "$IT_DIR/sshd.pid"
sshd_pid=$(cat "$IT_DIR/sshd.pid")

mkdir -p "$IT_DIR/wan" && echo 40 >"$IT_DIR/wan/rtt_ms"
wport=$(free_port)
python3 "$TB_DIR/bin/wan_proxy.py" "$wport" "$port" "$IT_DIR/wan" "$IT_DIR/wan/pid" >"$IT_DIR/wan/log" 2>&1 &
wan_pid=$!
wait_for 10 test -s "$IT_DIR/wan/pid"
printf '[127.0.0.1]:%s %s\n' "$wport" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")" >"$IT_DIR/known_hosts"
sed "s|Port $port|Port $wport|; s|UserKnownHostsFile .*|UserKnownHostsFile $IT_DIR/known_hosts|" \
  <(tb_ssh_host twice "$TB_DIR" "$port") >"$IT_DIR/ssh_config"
rvw() { "$RV" --ssh-config "$IT_DIR/ssh_config" --host twice "$@"; }
holder_pid() { rvw --json connect --status | jq -r '.connections[0].pid'; }
spare_ready() { [[ $(rvw --json connect --status | jq -c '.connections[0].spare') == true ]]; }
# The remote user appends to a file of this test's (it runs as the testbed's user, not ours).
chmod 711 "$IT_DIR"
mkdir -m 1777 "$IT_DIR/remote"

# cut_off NAME HOW: a held connection logged in at 40 ms, then the round trip set to 4 s; `rv exec`
# appends a line to remote/NAME, and HOW runs as soon as the line is there (the exec's answer is
# then still 2 s away). Leaves rv's status in CUT_RC, its stderr in CUT_ERR, the lines in CUT_LINES.
cut_off() {
  local name=$1 how=$2 file=$IT_DIR/remote/$1
  echo 40 >"$IT_DIR/wan/rtt_ms"
  run rvw connect
  assert_rc 0 "rv connect through the proxy ($name)"
  wait_for 10 spare_ready
  HOLDER=$(holder_pid)
  echo 4000 >"$IT_DIR/wan/rtt_ms"
  sleep 0.3 # the proxy reads rtt_ms every 100 ms
  (
    rc=0
    rvw exec -- sh -c "echo ran >> $file" >"$IT_DIR/$name.out" 2>"$IT_DIR/$name.err" </dev/null || rc=$?
    echo "$rc" >"$IT_DIR/$name.rc"
  ) &
  wait_for 20 test -s "$file"
  [[ ! -s $IT_DIR/$name.rc ]] || it_fail "$name: rv ended before the cut (rc $(cat "$IT_DIR/$name.rc"))"
  $how
  # Without the fix, rv logs in again (a new holder, at 4 s a round trip) and runs it a second time.
  wait_for 120 test -s "$IT_DIR/$name.rc"
  echo 40 >"$IT_DIR/wan/rtt_ms"
  sleep 1 # a second run, if one were on its way, lands in this time
  CUT_RC=$(cat "$IT_DIR/$name.rc")
  CUT_ERR=$(cat "$IT_DIR/$name.err")
  CUT_LINES=$(wc -l <"$file")
}

# ---- (a) the holder is killed after the exec reached the node ----
kill_holder() { kill -KILL "$HOLDER"; }
cut_off killed kill_holder
assert_eq 1 "$CUT_LINES" "the command ran once (holder killed): $CUT_ERR"
assert_eq 255 "$CUT_RC" "rv's status when the holder died after sending the command"
assert_contains "$CUT_ERR" "the held connection ended after the command was sent: it may have run" "the error"
assert_contains "$CUT_ERR" "rv: hint: check whether it ran before running it again" "the hint"
pass "holder SIGKILLed after the exec reached the node: ran once, rv exits 255 saying it may have run"

# ---- (b) the connection is reset (the proxy's SIGUSR1) after the exec reached the node ----
reset_link() { kill -USR1 "$wan_pid"; }
cut_off reset reset_link
assert_eq 1 "$CUT_LINES" "the command ran once (link reset): $CUT_ERR"
assert_eq 255 "$CUT_RC" "rv's status when the link dropped after the command was sent"
assert_contains "$CUT_ERR" "the held connection ended after the command was sent: it may have run" "the error"
pass "link reset after the exec reached the node: ran once, rv exits 255 saying it may have run"

# ---- after either: the next command starts a new holder and runs (once) ----
run rvw exec -- sh -c "echo again >> $IT_DIR/remote/after"
assert_rc 0 "rv exec after the cut"
assert_eq 1 "$(wc -l <"$IT_DIR/remote/after")" "the next command ran once"
pass "the next command after a cut-off runs once on a new holder"

# ---- (c) rv disconnect while a command runs (security-review-3 S4): rv disconnect warns, and the
# command ends "may have run" (before: "the held connection ended", which no read was asked again
# after: a race poll hit by it cancelled the request) ----
echo 40 >"$IT_DIR/wan/rtt_ms"
run rvw connect
assert_rc 0 "rv connect (disconnect case)"
(
  rc=0
  rvw exec -- sh -c "echo start >> $IT_DIR/remote/long; sleep 20" >/dev/null 2>"$IT_DIR/long.err" </dev/null || rc=$?
  echo "$rc" >"$IT_DIR/long.rc"
) &
wait_for 10 test -s "$IT_DIR/remote/long"
run rvw disconnect
assert_rc 0 "rv disconnect with a command running"
assert_contains "$RUN_ERR" "has 1 open channel: ending it ends it (a command may have run" "rv disconnect's warning"
wait_for 10 test -s "$IT_DIR/long.rc"
assert_eq 255 "$(cat "$IT_DIR/long.rc")" "the running command's status after rv disconnect"
assert_contains "$(cat "$IT_DIR/long.err")" "the held connection ended after the command was sent: it may have run" \
  "the running command's error after rv disconnect"
assert_eq 1 "$(wc -l <"$IT_DIR/remote/long")" "the command was not run again"
pass "rv disconnect with a command running: a warning; the command ends 255, may have run, not run again"
