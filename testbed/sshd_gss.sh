# shellcheck shell=bash
# The testbed's Kerberos login node (sourced by up.sh; docs/testbed.md, "Network modes"): a KDC
# for the realm RV.TEST on 127.0.0.1:$TB_KDC_PORT (TCP and UDP) and rvtb-gss (127.0.0.1:$TB_GSS_PORT),
# an sshd that accepts only GSSAPI (gssapi-with-mic: no authorized_keys, no password). A login
# there proves that a Kerberos ticket was used. Everything lives in $TB_DIR/krb5 and is made once
# per testbed; the host's /etc/krb5.conf is never read: clients and daemons get KRB5_CONFIG.
#   krb5.conf          the realm, its KDC, no DNS and no reverse lookups (host/127.0.0.1 as named)
#   sshd.keytab        host/127.0.0.1@RV.TEST and host/localhost@RV.TEST, for the sshd
#   rvtest.keytab      rvtest@RV.TEST: `kinit -k -t` gets the user's ticket without a password
# Tests: KRB5_CONFIG=$TB_KRB5_CONFIG KRB5CCNAME=FILE:... kinit -k -t $TB_KRB5_USER_KEYTAB rvtest

TB_GSS_PORT=2224
TB_KDC_PORT=2288
TB_REALM=RV.TEST

tb_gss_env() {
  local k=$TB_DIR/krb5
  printf 'KRB5_CONFIG=%s KRB5_KDC_PROFILE=%s KRB5_KTNAME=FILE:%s\n' "$k/krb5.conf" "$k/kdc.conf" "$k/sshd.keytab"
}

tb_gss_realm() {
  local k=$TB_DIR/krb5
  install -d -m 755 "$k"
  cat >"$k/krb5.conf" <<EOF
[libdefaults]
  default_realm = $TB_REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
[realms]
  $TB_REALM = {
    kdc = 127.0.0.1:$TB_KDC_PORT
  }
EOF
  cat >"$k/kdc.conf" <<EOF
[kdcdefaults]
  kdc_ports = $TB_KDC_PORT
  kdc_tcp_ports = $TB_KDC_PORT
  kdc_listen = 127.0.0.1:$TB_KDC_PORT
  kdc_tcp_listen = 127.0.0.1:$TB_KDC_PORT
[realms]
  $TB_REALM = {
    database_name = $k/principal
    key_stash_file = $k/stash
    acl_file = $k/kadm5.acl
    max_life = 1d
  }
[logging]
  kdc = FILE:$TB_DIR/log/krb5kdc.log
EOF
  chmod 644 "$k/krb5.conf" "$k/kdc.conf"
  [[ -e $k/kadm5.acl ]] || : >"$k/kadm5.acl"
  [[ -s $k/principal ]] && [[ -s $k/rvtest.keytab ]] && return 0
  rm -f "$k"/principal* "$k/stash" "$k"/*.keytab
  local e
  e=$(tb_gss_env)
  # shellcheck disable=SC2086  # the environment's words
  env $e kdb5_util create -s -r "$TB_REALM" -P "rv-testbed-$RANDOM$RANDOM" >/dev/null
  # shellcheck disable=SC2086
  env $e kadmin.local -q "addprinc -randkey host/127.0.0.1" >/dev/null
  # shellcheck disable=SC2086
  env $e kadmin.local -q "addprinc -randkey host/localhost" >/dev/null
  # shellcheck disable=SC2086
  env $e kadmin.local -q "addprinc -randkey $TB_SSH_USER" >/dev/null
  # shellcheck disable=SC2086
  env $e kadmin.local -q "ktadd -k $k/sshd.keytab host/127.0.0.1 host/localhost" >/dev/null
  # shellcheck disable=SC2086
  env $e kadmin.local -q "ktadd -k $k/rvtest.keytab $TB_SSH_USER" >/dev/null
  chmod 600 "$k/sshd.keytab"
  chmod 644 "$k/rvtest.keytab" # the tests' user ticket, on a loopback-only testbed
}

tb_gss_start_kdc() {
  local pidfile=$TB_DIR/krb5kdc.pid
  tb_pid_alive "$pidfile" && return 0
  local e
  e=$(tb_gss_env)
  # shellcheck disable=SC2086
  env $e krb5kdc -P "$pidfile"
  tb_wait 10 tb_pid_alive "$pidfile" || tb_die "krb5kdc did not start; see $TB_DIR/log/krb5kdc.log"
}

ensure_gss_sshd() {
  if ! command -v krb5kdc >/dev/null && [[ ! -x /usr/sbin/krb5kdc ]]; then
    tb_log "no Kerberos KDC installed (krb5-kdc krb5-admin-server krb5-user): rvtb-gss is not started"
    return 0
  fi
  tb_gss_realm
  tb_gss_start_kdc
  install -d -m 755 "$TB_DIR/net"
  {
    tb_net_sshd_config gss "$TB_GSS_PORT" |
      sed -e "s|^AuthorizedKeysFile .*|AuthorizedKeysFile none|" -e "s|^PubkeyAuthentication .*|PubkeyAuthentication no|"
    printf 'GSSAPIAuthentication yes\nGSSAPIStrictAcceptorCheck no\nGSSAPICleanupCredentials yes\n'
  } >"$TB_DIR/net/gss.conf"
  local pidfile=$TB_DIR/sshd-gss.pid e
  if ! tb_pid_alive "$pidfile"; then
    e=$(tb_gss_env)
    /usr/sbin/sshd -t -f "$TB_DIR/net/gss.conf"
    # shellcheck disable=SC2086
    env $e /usr/sbin/sshd -f "$TB_DIR/net/gss.conf" -E "$TB_DIR/log/sshd-gss.log"
    tb_wait 10 tb_pid_alive "$pidfile" || tb_die "sshd gss did not start; see $TB_DIR/log/sshd-gss.log"
  fi
  printf '[127.0.0.1]:%s %s\n' "$TB_GSS_PORT" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")" >>"$TB_DIR/ssh/known_hosts"
  sort -u -o "$TB_DIR/ssh/known_hosts" "$TB_DIR/ssh/known_hosts"
  local config=$TB_DIR/ssh/config
  sed -i '/^# >>> kerberos/,/^# <<< kerberos/d' "$config"
  {
    echo "# >>> kerberos (testbed/sshd_gss.sh)"
    tb_net_host rvtb-gss "$TB_GSS_PORT" "$TB_DIR/ssh/id_ed25519"
    echo "  GSSAPIAuthentication yes"
    echo "# <<< kerberos"
  } >>"$config"
}
