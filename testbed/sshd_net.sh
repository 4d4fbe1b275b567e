# shellcheck shell=bash
# The testbed's network modes (sourced by up.sh; docs/testbed.md, "Network modes"): what stands
# between a researcher's laptop and the login node. Each is started beside the running daemons,
# also when the testbed is already up, and never touches the others:
# - rvtb-ca (127.0.0.1:$TB_CA_PORT): a login node that accepts only user certificates signed by the
#   testbed's CA (`TrustedUserCAKeys`, no authorized_keys); one valid and one expired certificate.
# - rvtb-bastion, rvtb-bastion2 ($TB_BASTION_PORT, $TB_BASTION2_PORT): jump hosts (no shell) in
#   front of the login nodes; `PermitOpen` lets the first reach the login nodes and the second
#   bastion, the second only the login nodes, so a two-hop ProxyJump taken in the wrong order fails.
# - rvtb-wan ($TB_WAN_PORT): testbed/wan_proxy.py in front of the key-only login node: a round trip
#   of $TB_WAN_DIR/rtt_ms (default 40) ms and SIGUSR1 to drop every connection.

# tb_net_sshd_config NAME PORT: a key-only sshd_config like the login node's, its pidfile
# $TB_DIR/sshd-NAME.pid; the caller appends its own lines.
tb_net_sshd_config() {
  tb_sshd_config "$TB_DIR" "$2" | sed "s|^PidFile .*|PidFile $TB_DIR/sshd-$1.pid|"
}

# tb_net_start_sshd NAME: starts sshd with $TB_DIR/net/NAME.conf unless its pidfile is alive.
tb_net_start_sshd() {
  local pidfile=$TB_DIR/sshd-$1.pid
  tb_pid_alive "$pidfile" && return 0
  /usr/sbin/sshd -t -f "$TB_DIR/net/$1.conf"
  /usr/sbin/sshd -f "$TB_DIR/net/$1.conf" -E "$TB_DIR/log/sshd-$1.log"
  tb_wait 10 tb_pid_alive "$pidfile" || tb_die "sshd $1 did not start; see $TB_DIR/log/sshd-$1.log"
}

# The user CA and the certificates (made once per testbed): keys that are NOT in authorized_keys,
# so a login proves that the certificate was used.
#   id_cert + id_cert-cert.pub           valid (-5 min .. +52 weeks), beside the key
#   id_certfile + certs/certfile.pub     valid, found only through `CertificateFile`
#   id_expired + id_expired-cert.pub     expired (2020-01-01 .. 2020-01-02)
tb_net_ca() {
  local c=$TB_DIR/ca
  install -d -m 755 "$c" "$c/certs"
  [[ -s $c/user_ca ]] || ssh-keygen -q -t ed25519 -N '' -C rv-testbed-user-ca -f "$c/user_ca"
  local key validity
  for key in id_cert:-5m:+52w id_certfile:-5m:+52w id_expired:20200101:20200102; do
    validity=${key#*:}
    key=${key%%:*}
    [[ -s $c/$key ]] || ssh-keygen -q -t ed25519 -N '' -C "rv-testbed-$key" -f "$c/$key"
    [[ -s $c/$key-cert.pub ]] ||
      ssh-keygen -q -s "$c/user_ca" -I "rvtest-$key" -n "$TB_SSH_USER" -V "$validity" "$c/$key.pub"
  done
  # CertificateFile's: moved away from its key (no <key>-cert.pub beside id_certfile).
  if [[ -s $c/id_certfile-cert.pub ]]; then mv "$c/id_certfile-cert.pub" "$c/certs/certfile.pub"; fi
}

ensure_net_modes() {
  local n=$TB_DIR/net
  install -d -m 755 "$n" "$TB_DIR/wan"
  tb_net_ca
  {
    tb_net_sshd_config ca "$TB_CA_PORT" | sed "s|^AuthorizedKeysFile .*|AuthorizedKeysFile none|"
    echo "TrustedUserCAKeys $TB_DIR/ca/user_ca.pub"
  } >"$n/ca.conf"
  {
    tb_net_sshd_config bastion "$TB_BASTION_PORT"
    printf 'AllowTcpForwarding yes\nPermitTTY no\nX11Forwarding no\nForceCommand echo "rvtb-bastion: a jump host, no shell"\n'
    printf 'PermitOpen 127.0.0.1:%s 127.0.0.1:%s 127.0.0.1:%s 127.0.0.1:%s\n' \
      "$TB_SSH_PORT" "$TB_2FA_PORT" "$TB_CA_PORT" "$TB_BASTION2_PORT"
  } >"$n/bastion.conf"
  {
    tb_net_sshd_config bastion2 "$TB_BASTION2_PORT"
    printf 'AllowTcpForwarding yes\nPermitTTY no\nX11Forwarding no\nForceCommand echo "rvtb-bastion2: a jump host, no shell"\n'
    printf 'PermitOpen 127.0.0.1:%s 127.0.0.1:%s 127.0.0.1:%s\n' "$TB_SSH_PORT" "$TB_2FA_PORT" "$TB_CA_PORT"
  } >"$n/bastion2.conf"
  local port
  for port in "$TB_CA_PORT" "$TB_BASTION_PORT" "$TB_BASTION2_PORT" "$TB_WAN_PORT"; do
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")"
  done >>"$TB_DIR/ssh/known_hosts"
  sort -u -o "$TB_DIR/ssh/known_hosts" "$TB_DIR/ssh/known_hosts"
  tb_net_ssh_config
  tb_net_start_sshd ca
  tb_net_start_sshd bastion
  tb_net_start_sshd bastion2
  tb_net_start_wan
}

tb_net_start_wan() {
  local pidfile=$TB_DIR/wan-proxy.pid
  [[ -s $TB_DIR/wan/rtt_ms ]] || echo 40 >"$TB_DIR/wan/rtt_ms"
  chmod 666 "$TB_DIR/wan/rtt_ms" # the tests and benchmarks set it
  install -m 755 "${here:?}/wan_proxy.py" "$TB_DIR/bin/wan_proxy.py"
  install -m 755 "$here/wan" "$TB_DIR/bin/wan"
  tb_pid_alive "$pidfile" && return 0
  setsid python3 "$TB_DIR/bin/wan_proxy.py" "$TB_WAN_PORT" "$TB_SSH_PORT" "$TB_DIR/wan" "$pidfile" \
    </dev/null >>"$TB_DIR/log/wan-proxy.log" 2>&1 &
  tb_wait 10 tb_pid_alive "$pidfile" || tb_die "the WAN proxy did not start; see $TB_DIR/log/wan-proxy.log"
}

# The Host aliases of the network modes in $TB_SSH_CONFIG (one marked block, rewritten each time).
tb_net_ssh_config() {
  local config=$TB_DIR/ssh/config c=$TB_DIR/ca
  sed -i '/^# >>> network modes/,/^# <<< network modes/d' "$config"
  {
    echo "# >>> network modes (testbed/sshd_net.sh)"
    tb_net_host rvtb-ca "$TB_CA_PORT" "$c/id_cert"
    tb_net_host rvtb-ca-certfile "$TB_CA_PORT" "$c/id_certfile"
    echo "  CertificateFile $c/certs/certfile.pub"
    tb_net_host rvtb-ca-expired "$TB_CA_PORT" "$c/id_expired"
    tb_net_host rvtb-bastion "$TB_BASTION_PORT" "$TB_DIR/ssh/id_ed25519"
    tb_net_host rvtb-bastion2 "$TB_BASTION2_PORT" "$TB_DIR/ssh/id_ed25519"
    tb_net_host rvtb-jump "$TB_SSH_PORT" "$TB_DIR/ssh/id_ed25519"
    echo "  ProxyJump rvtb-bastion"
    tb_net_host rvtb-jump2 "$TB_SSH_PORT" "$TB_DIR/ssh/id_ed25519"
    echo "  ProxyJump rvtb-bastion,rvtb-bastion2"
    tb_net_host rvtb-ca-jump "$TB_CA_PORT" "$c/id_cert"
    echo "  ProxyJump rvtb-bastion"
    tb_net_host rvtb-wan "$TB_WAN_PORT" "$TB_DIR/ssh/id_ed25519"
    echo "# <<< network modes"
  } >>"$config"
}

# tb_net_host ALIAS PORT KEY: a Host block on 127.0.0.1 (the caller may add lines).
tb_net_host() {
  printf 'Host %s\n  HostName 127.0.0.1\n  Port %s\n  User %s\n  IdentityFile %s\n' "$1" "$2" "$TB_SSH_USER" "$3"
  printf '  UserKnownHostsFile %s\n  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n  BatchMode yes\n' \
    "$TB_DIR/ssh/known_hosts"
}
