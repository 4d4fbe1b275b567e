#!/usr/bin/env bash
# What OpenSSH users have in ~/.ssh/config, through rv (#28; docs/ssh.md, "Compared with OpenSSH"),
# on the testbed's network modes (docs/testbed.md, "Network modes"): ProxyJump over one and two
# bastions (the second bastion reachable only from the first: the wrong order fails), a second
# factor asked at the bastion, a bastion that is down; user certificates beside the key, through
# CertificateFile and through a jump, an expired one (one-line error, hint); IdentitiesOnly with
# an agent full of other keys, the agent alone, IdentityAgent; HostName/User/Port aliases and Include; rsync
# and SFTP over the two-hop jump, cold and through the held connection; the WAN proxy dropping a
# held connection. ~40 s.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

if [[ -z ${TB_CA_PORT:-} ]] || ! kill -0 "$(cat "$TB_DIR/sshd-bastion2.pid" 2>/dev/null)" 2>/dev/null ||
  ! kill -0 "$(cat "$TB_DIR/sshd-ca.pid" 2>/dev/null)" 2>/dev/null; then
  printf '%s: SKIP: the testbed has no network modes (testbed/up.sh starts them)\n' "$IT_NAME" >&2
  exit 125
fi
export RV_STATE_DIR=$IT_DIR/state
C=$TB_SSH_CONFIG
accepted() { grep -c "Accepted publickey for $TB_SSH_USER" "$TB_DIR/log/sshd-$1.log" || true; }
rvc() { "$RV" --ssh-config "$C" --host "$@"; }
agent_pid=""
cleanup_net() {
  [[ -z $agent_pid ]] || kill "$agent_pid" 2>/dev/null || true
  remote rm -rf "${ws%/_default/code}" 2>/dev/null || true
}
ws=""
trap 'cleanup_net; it_cleanup' EXIT

# ---- ProxyJump: one hop, two hops (order matters), a literal hop, a bastion that is down ----
b1=$(accepted bastion) b2=$(accepted bastion2)
run rvc "$TB_JUMP_HOST" exec hostname
assert_rc 0 "ProxyJump, one hop"
assert_eq "$(hostname)" "$RUN_OUT" "the command ran on the login node"
assert_eq $((b1 + 1)) "$(accepted bastion)" "one login at the bastion"
run rvc "$TB_JUMP2_HOST" exec echo two-hops
assert_rc 0 "ProxyJump, two hops"
assert_eq "two-hops" "$RUN_OUT" "two hops: output"
assert_eq $((b1 + 2)) "$(accepted bastion)" "two hops: the first bastion was used"
assert_eq $((b2 + 1)) "$(accepted bastion2)" "two hops: the second bastion was used"
pass "ProxyJump rvtb-bastion and rvtb-bastion,rvtb-bastion2 (the second reachable only from the first)"

# Include, HostName/User/Port aliases, a literal user@host:port hop, a dead bastion, 2FA at a bastion.
cat >"$IT_DIR/ssh_config" <<CONF
Include $C
$(tb_ssh_jump_host literal-jump "$TB_SSH_USER@127.0.0.1:$TB_BASTION_PORT")
Host dead-jump
  HostName 127.0.0.1
  Port $TB_SSH_PORT
  ProxyJump rvtest@127.0.0.1:1
Host via-2fa
  HostName 127.0.0.1
  Port $TB_SSH_PORT
  User $TB_SSH_USER
  IdentityFile $TB_SSH_KEY
  UserKnownHostsFile $TB_SSH_KNOWN_HOSTS
  ProxyJump rvtb-2fa
Host 127.0.0.1
  IdentityFile $TB_SSH_KEY
  UserKnownHostsFile $TB_SSH_KNOWN_HOSTS
  IdentitiesOnly yes
  BatchMode yes
CONF
run "$RV" --ssh-config "$IT_DIR/ssh_config" --host rvtb exec echo included
assert_eq "0 included" "$RUN_RC $RUN_OUT" "a Host of an Included file"
run "$RV" --ssh-config "$IT_DIR/ssh_config" --host literal-jump exec echo literal
assert_eq "0 literal" "$RUN_RC $RUN_OUT" "ProxyJump user@127.0.0.1:port (its block from Host 127.0.0.1)"
run "$RV" --ssh-config "$IT_DIR/ssh_config" --host dead-jump exec true
assert_rc 255 "a bastion that is down"
assert_contains "$RUN_ERR" "cannot connect through ProxyJump rvtest@" "the error names the jump"
assert_contains "$RUN_ERR" "Connection refused" "the jump's own error is shown"
assert_eq 1 "$(grep -c '^rv: error:' <<<"$RUN_ERR")" "one error line"
assert_contains "$RUN_ERR" "dead-jump true\` works" "the hint says what to try"
pass "Include, HostName/User/Port, a user@host:port hop; a dead bastion: exit 255 with the jump's 'Connection refused'"
if command -v oathtool >/dev/null && kill -0 "$(cat "$TB_DIR/sshd-2fa.pid" 2>/dev/null)" 2>/dev/null; then
  run setsid -w env SSH_ASKPASS="$TB_TOTP" SSH_ASKPASS_REQUIRE=force "$RV" --ssh-config "$IT_DIR/ssh_config" \
    --host via-2fa exec echo via-2fa
  assert_eq "0 via-2fa" "$RUN_RC $RUN_OUT" "a bastion that asks a second factor (SSH_ASKPASS)"
  pass "a bastion asking a TOTP code: the jump's ssh asked SSH_ASKPASS"
fi

# ---- user certificates: beside the key, CertificateFile, through a jump, -i; expired ----
ca=$(accepted ca)
for host in rvtb-ca rvtb-ca-certfile rvtb-ca-jump; do
  run rvc "$host" exec echo "$host"
  assert_eq "0 $host" "$RUN_RC $RUN_OUT" "certificate login through $host"
done
run "$RV" --ssh-config '' -i "$TB_CA_DIR/id_cert" --known-hosts "$TB_SSH_KNOWN_HOSTS" \
  --host "$TB_SSH_USER@127.0.0.1:$TB_CA_PORT" exec echo dash-i
assert_eq "0 dash-i" "$RUN_RC $RUN_OUT" "-i KEY with KEY-cert.pub beside it, no ssh config"
assert_eq $((ca + 4)) "$(accepted ca)" "four logins at the certificate-only sshd"
assert_contains "$(grep "Accepted publickey for $TB_SSH_USER" "$TB_DIR/log/sshd-ca.log" | tail -1)" "ED25519-CERT" \
  "sshd took a certificate"
run rvc rvtb-ca-expired exec true
assert_rc 254 "an expired certificate"
assert_eq 1 "$(grep -c '^rv: error:' <<<"$RUN_ERR")" "one error line"
assert_contains "$RUN_ERR" "id_expired-cert.pub: it expired on 2020-01-02 00:00 UTC" "the error says which and when"
assert_contains "$RUN_ERR" "rv: hint: get a new certificate" "the hint says what to do"
pass "certificates: beside the key, CertificateFile, through a jump, -i; expired: exit 254, 'expired on 2020-01-02'"

# ---- the agent: IdentitiesOnly with 7 other keys in it (sshd's MaxAuthTries is 6); the agent alone ----
eval "$(ssh-agent -s)" >/dev/null
agent_pid=$SSH_AGENT_PID
for i in 1 2 3 4 5 6 7; do
  ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/other$i"
  ssh-add -q "$IT_DIR/other$i" 2>/dev/null
done
run rvc rvtb exec echo identities-only
assert_eq "0 identities-only" "$RUN_RC $RUN_OUT" "IdentitiesOnly yes: the config's key, not the agent's 7"
ssh-add -D -q 2>/dev/null # 8 keys would pass sshd's MaxAuthTries for OpenSSH's ssh too
ssh-add -q "$TB_SSH_KEY" 2>/dev/null
run "$RV" --ssh-config '' --known-hosts "$TB_SSH_KNOWN_HOSTS" --host "$TB_SSH_USER@127.0.0.1:$TB_SSH_PORT" exec echo agent
assert_eq "0 agent" "$RUN_RC $RUN_OUT" "the agent's key, no config and no -i"
printf 'Host agent-only\n  HostName 127.0.0.1\n  Port %s\n  User %s\n  IdentityAgent %s\n  UserKnownHostsFile %s\n' \
  "$TB_SSH_PORT" "$TB_SSH_USER" "$SSH_AUTH_SOCK" "$TB_SSH_KNOWN_HOSTS" >"$IT_DIR/agent_config"
run env -u SSH_AUTH_SOCK "$RV" --ssh-config "$IT_DIR/agent_config" --host agent-only exec echo identity-agent
assert_eq "0 identity-agent" "$RUN_RC $RUN_OUT" "IdentityAgent names the agent (SSH_AUTH_SOCK unset)"
kill "$agent_pid" && agent_pid="" && unset SSH_AUTH_SOCK SSH_AGENT_PID
pass "IdentitiesOnly with an agent holding 7 other keys; the agent's key without a config; IdentityAgent"

# ---- rsync and SFTP over two hops: cold (OpenSSH's ssh -F for rsync), then held (rv's relay) ----
mkdir -p "$IT_DIR/proj" && cd "$IT_DIR/proj" && printf 'print("net")\n' >net.py
# rsync asked for: a push this small would go inside the apply step (docs/sync.md, "Transfer").
run env RV_CONNECTION_PERSIST=0 RV_SYNC_TRANSPORT=rsync "$RV" --ssh-config "$C" --host "$TB_JUMP2_HOST" sync push
assert_rc 0 "rsync push over two hops, no held connection"
assert_contains "$RUN_OUT" "via rsync" "rsync was used"
ws=$(awk '{ print $NF }' <<<"$RUN_OUT")
assert_eq 'print("net")' "$(remote cat "$ws/net.py")" "rsync sent the file"
printf 'print("net v2")\n' >net.py
run env RV_CONNECTION_PERSIST=0 RV_SYNC_TRANSPORT=sftp "$RV" --ssh-config "$C" --host "$TB_JUMP2_HOST" sync push
assert_contains "$RUN_RC $RUN_OUT" "0 " "SFTP push over two hops" && assert_contains "$RUN_OUT" "via sftp" "SFTP was used"
assert_eq 'print("net v2")' "$(remote cat "$ws/net.py")" "SFTP sent the edit"
run env RV_CONNECTION_PERSIST=30m "$RV" --ssh-config "$C" --host "$TB_JUMP2_HOST" connect
assert_rc 0 "rv connect over two hops"
b2=$(accepted bastion2)
printf 'print("net v3")\n' >net.py
run env RV_CONNECTION_PERSIST=30m RV_SYNC_TRANSPORT=rsync "$RV" --ssh-config "$C" --host "$TB_JUMP2_HOST" sync push
assert_rc 0 "rsync push through the held connection"
assert_contains "$RUN_OUT" "via rsync" "rsync was used through the holder"
assert_eq 'print("net v3")' "$(remote cat "$ws/net.py")" "the relay's rsync sent the edit"
assert_eq "$b2" "$(accepted bastion2)" "no new login at the bastion: rsync went through the held session"
cd "$IT_DIR"
pass "rsync and SFTP over rvtb-bastion,rvtb-bastion2, cold; rsync through the held connection with no new login"

# ---- WAN: a held connection through the proxy, dropped; the next command logs in again ----
"$TB_WAN" rtt 40
# shellcheck disable=SC2153  # TB_WAN_HOST comes from the testbed env
run env RV_CONNECTION_PERSIST=30m "$RV" --ssh-config "$C" --host "$TB_WAN_HOST" exec echo before
assert_eq "0 before" "$RUN_RC $RUN_OUT" "through the WAN proxy"
"$TB_WAN" drop
run env RV_CONNECTION_PERSIST=30m "$RV" --ssh-config "$C" --host "$TB_WAN_HOST" exec echo after
assert_eq "0 after" "$RUN_RC $RUN_OUT" "after the proxy dropped the held connection"
assert_faster_than 10 "the dropped connection is replaced at once"
pass "WAN proxy: a dropped held connection is replaced by the next command (${RUN_SECS}s)"
