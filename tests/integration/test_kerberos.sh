#!/usr/bin/env bash
# GSSAPIAuthentication (#28; docs/ssh.md, "Kerberos"): rvtb-gss (testbed/sshd_gss.sh) accepts only
# a Kerberos ticket of the testbed's realm. Without a ticket rv fails with one error line and a
# kinit hint (OpenSSH fails too); with one (kinit -k from the user's keytab) rv logs in by
# gssapi-with-mic, as OpenSSH does; a host whose config does not say GSSAPIAuthentication is not
# offered the ticket. ~3 s.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

if [[ -z ${TB_GSS_HOST:-} ]] || ! kill -0 "$(cat "$TB_DIR/sshd-gss.pid" 2>/dev/null)" 2>/dev/null; then
  printf '%s: SKIP: the testbed has no Kerberos login node (krb5-kdc not installed; testbed/up.sh starts it)\n' \
    "$IT_NAME" >&2
  exit 125
fi
export RV_STATE_DIR=$IT_DIR/state RV_CONNECTION_PERSIST=0
export KRB5_CONFIG=$TB_KRB5_CONFIG KRB5CCNAME=FILE:$IT_DIR/krb5cc
C=$TB_SSH_CONFIG
gss_logins() { grep -c "Accepted gssapi-with-mic for $TB_SSH_USER" "$TB_DIR/log/sshd-gss.log" || true; }

# ---- no ticket: one error line, the hint says kinit; OpenSSH is refused as well ----
kdestroy 2>/dev/null || true
before=$(gss_logins)
run "$RV" --ssh-config "$C" --host "$TB_GSS_HOST" exec true
assert_rc 254 "no Kerberos ticket"
assert_eq 1 "$(grep -c '^rv: error:' <<<"$RUN_ERR")" "one error line"
assert_contains "$RUN_ERR" "refused Kerberos (GSSAPI) and every key" "the error names Kerberos"
assert_contains "$RUN_ERR" "rv: hint: get a Kerberos ticket with \`kinit\`" "the hint says what to do"
run ssh -F "$C" "$TB_GSS_HOST" true
assert_rc 255 "OpenSSH without a ticket"
pass "no ticket: exit 254, one error line naming Kerberos, hint kinit (OpenSSH: refused too)"

# ---- a ticket: rv logs in with it, as OpenSSH does ----
run kinit -k -t "$TB_KRB5_USER_KEYTAB" "$TB_SSH_USER"
assert_rc 0 "kinit from the user's keytab"
run "$RV" --ssh-config "$C" --host "$TB_GSS_HOST" exec -- whoami
assert_eq "0 $TB_SSH_USER" "$RUN_RC $RUN_OUT" "rv logs in with the ticket"
assert_eq $((before + 1)) "$(gss_logins)" "sshd accepted gssapi-with-mic once"
run ssh -F "$C" "$TB_GSS_HOST" whoami
assert_eq "0 $TB_SSH_USER" "$RUN_RC $RUN_OUT" "OpenSSH logs in with the ticket"
assert_contains "$(klist 2>&1)" "host/127.0.0.1@" "the service ticket is the login node's host principal"
pass "a ticket: rv logs in by gssapi-with-mic (sshd's log says so), as OpenSSH does"

# ---- the ticket is offered only where the config asks: a key-only host still logs in by key ----
run "$RV" --ssh-config "$C" --host "$TB_HOST" exec -- echo by-key
assert_eq "0 by-key" "$RUN_RC $RUN_OUT" "the key-only login node, with a ticket in the cache"
pass "a host without GSSAPIAuthentication logs in by key, the ticket untouched"
