# shellcheck shell=bash
# The login node's second-factor mode (sourced by up.sh): a second loopback sshd on
# $TB_2FA_PORT that asks, like many research clusters, for a public key AND a TOTP code
# (`AuthenticationMethods publickey,keyboard-interactive`, PAM's pam_oath). Started beside the
# key-only sshd, also when the testbed is already up; it never touches the other daemons.
# docs/testbed.md, "Second-factor mode".

# PAM picks its service by sshd's program name: sshd started through this link reads
# /etc/pam.d/rvtb-2fa-sshd, and the system's own /etc/pam.d/sshd stays as it is.
TB_2FA_SERVICE=rvtb-2fa-sshd

# The TOTP secret (hex) shared by the users file and by testbed/totp; new per testbed.
tb_2fa_secret() { cat "$TB_DIR/ssh2fa/secret"; }

ensure_2fa_sshd() {
  local s=$TB_DIR/ssh2fa pidfile=$TB_DIR/sshd-2fa.pid
  if tb_pid_alive "$pidfile"; then
    return 0
  fi
  if [[ ! -e /usr/lib/x86_64-linux-gnu/security/pam_oath.so && ! -e /lib/x86_64-linux-gnu/security/pam_oath.so ]] ||
    ! command -v oathtool >/dev/null; then
    tb_log "second-factor sshd not started: libpam-oath and oathtool are not installed (TB_INSTALL=1)"
    return 0
  fi
  install -d -m 755 "$s" "$TB_DIR/bin"
  install -m 755 "${here:?}/totp" "$TB_DIR/bin/totp"
  [[ -s $s/secret ]] || { head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$s/secret"; }
  chmod 644 "$s/secret" # the tests compute codes with it (any local user: a test box)
  # pam_oath rewrites this file (the last code used) and refuses a code used before.
  install -d -m 700 "$s/oath"
  {
    printf 'HOTP/T30/6 %s - %s\n' "$TB_SSH_USER" "$(tb_2fa_secret)"
    printf 'HOTP/T30/6 rvinit - %s\n' "$(tb_2fa_secret)"
  } >"$s/oath/users"
  chmod 600 "$s/oath/users"
  [[ -e $s/totp-step ]] || printf '0\n' >"$s/totp-step"
  chmod 666 "$s/totp-step"
  # rvtest: the key was checked by sshd, PAM asks the code only. rvinit (test_init.sh's user,
  # no key yet): the Unix password, then the code, in one keyboard-interactive exchange.
  cat >"/etc/pam.d/$TB_2FA_SERVICE" <<PAM
# rv testbed, second-factor sshd (testbed/sshd_2fa.sh); removed by testbed/down.sh
auth [success=1 default=ignore] pam_succeed_if.so quiet user != rvinit
auth requisite pam_unix.so
auth required pam_oath.so usersfile=$s/oath/users window=40 digits=6
account required pam_permit.so
session required pam_permit.so
PAM
  cat >"$s/sshd_config" <<CONF
Port $TB_2FA_PORT
ListenAddress 127.0.0.1
HostKey $TB_DIR/ssh/ssh_host_ed25519_key
PidFile $pidfile
AllowUsers $TB_SSH_USER rvinit
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication yes
UsePAM yes
AuthenticationMethods publickey,keyboard-interactive
PermitRootLogin no
StrictModes yes
LogLevel VERBOSE
Subsystem sftp internal-sftp
Match User rvinit
  AuthenticationMethods keyboard-interactive publickey,keyboard-interactive
CONF
  {
    printf '[127.0.0.1]:%s %s\n' "$TB_2FA_PORT" "$(cat "$TB_DIR/ssh/ssh_host_ed25519_key.pub")"
  } >>"$TB_DIR/ssh/known_hosts"
  sort -u -o "$TB_DIR/ssh/known_hosts" "$TB_DIR/ssh/known_hosts"
  if ! grep -q '^Host rvtb-2fa$' "$TB_DIR/ssh/config" 2>/dev/null; then
    cat >>"$TB_DIR/ssh/config" <<CONF

# The second-factor login node: key, then a TOTP code (testbed/totp prints one)
Host rvtb-2fa
  HostName 127.0.0.1
  Port $TB_2FA_PORT
  User $TB_SSH_USER
  IdentityFile $TB_DIR/ssh/id_ed25519
  UserKnownHostsFile $TB_DIR/ssh/known_hosts
  IdentitiesOnly yes
  StrictHostKeyChecking yes
CONF
  fi
  ln -sfn /usr/sbin/sshd "$s/$TB_2FA_SERVICE"
  install -d -m 0755 /run/sshd
  "$s/$TB_2FA_SERVICE" -t -f "$s/sshd_config"
  "$s/$TB_2FA_SERVICE" -f "$s/sshd_config" -E "$TB_DIR/log/sshd-2fa.log"
  tb_wait 10 tb_pid_alive "$pidfile" || tb_die "the second-factor sshd did not start; see $TB_DIR/log/sshd-2fa.log"
}
