#!/usr/bin/env bash
# `rv init --non-interactive` against a real sshd that accepts passwords: a second sshd of this
# test on a free loopback port (the testbed's own sshd is key-only and must not be restarted),
# user `rvinit` (created once and kept, with a fresh random password each run and an association
# in rvacct). Checks known_hosts, the generated key, authorized_keys, the config, that a second
# run changes nothing and needs no password, that the password appears nowhere (files, rv's trace,
# the argv of every process while rv runs), and the reachability diagnosis. ~15 s. Needs root.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

if ((EUID != 0)) || ! command -v chpasswd >/dev/null || [[ ! -x /usr/sbin/sshd ]]; then
  printf '%s: SKIP: needs root, chpasswd and /usr/sbin/sshd (a test user and a password sshd)\n' "$IT_NAME" >&2
  exit 125
fi

USER_NAME=rvinit
id "$USER_NAME" >/dev/null 2>&1 || useradd -m -s /bin/bash "$USER_NAME"
USER_HOME=$(getent passwd "$USER_NAME" | cut -d: -f6)
PASSWORD="pw-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s:%s\n' "$USER_NAME" "$PASSWORD" | chpasswd
# An association, so that sacctmgr show assoc has something to say (idempotent; kept).
sacctmgr -i add user "$USER_NAME" Account=rvacct DefaultAccount=rvacct >/dev/null 2>&1 || true

SCRATCH_DIR=$(mktemp -d /tmp/rv-it-init-scratch.XXXXXX)
chown "$USER_NAME" "$SCRATCH_DIR"
SSHD_DIR=$IT_DIR/sshd
mkdir -p "$SSHD_DIR"
ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/host_key"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$SSHD_DIR/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $SSHD_DIR/host_key
PidFile $SSHD_DIR/sshd.pid
AllowUsers $USER_NAME
PubkeyAuthentication yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
StrictModes yes
CONF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$SSHD_DIR/sshd_config" -E "$SSHD_DIR/sshd.log" || it_fail "the test's sshd did not start"
cleanup_init() {
  local pid
  [[ -z ${IT_TMUX_SOCK:-} ]] || tm kill-server 2>/dev/null || true
  if read -r pid <"$SSHD_DIR/sshd.pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$USER_HOME/.ssh" "$USER_HOME/.rv" "$SCRATCH_DIR"
}
trap 'cleanup_init; it_cleanup' EXIT
wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"
rm -rf "$USER_HOME/.ssh" "$USER_HOME/.rv"

export HOME=$IT_DIR/home # a fresh laptop: no keys, no known_hosts, no config
mkdir -p "$HOME"
init_args=(init --non-interactive --host "$USER_NAME@127.0.0.1" --port "$PORT" --ssh-config '' --scratch "$SCRATCH_DIR")

# ---- first run: password on stdin, -vvv trace; watch every process's argv while it runs ----
"$RV" -vvv "${init_args[@]}" --password-stdin --yes <<<"$PASSWORD" >"$IT_DIR/out" 2>"$IT_DIR/trace" &
rv_pid=$!
: >"$IT_DIR/argv"
while kill -0 "$rv_pid" 2>/dev/null; do
  cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' >>"$IT_DIR/argv" || true
  sleep 0.05
done
rc=0
wait "$rv_pid" || rc=$?
RUN_RC=$rc RUN_CMD="rv init (first run)" RUN_SECS="?" RUN_OUT=$(<"$IT_DIR/out") RUN_ERR=$(tail -c 3000 "$IT_DIR/trace")
assert_rc 0 "the first rv init succeeds"
cp "$IT_DIR/out" "$IT_DIR/first.txt"
assert_eq "host host_key key install_key verify ssh_config slurm storage" "$(awk '/^  [a-z_]+ +[a-z]+/ {print $1}' "$IT_DIR/out" | tr '\n' ' ' | sed 's/ $//')" \
  "every step, in order"
assert_match "$RUN_OUT" "install_key +done +detail=added to ~/.ssh/authorized_keys" "the key was installed"
assert_match "$RUN_OUT" "  key +done .*path=$HOME/.ssh/id_ed25519_rv" "a key was generated, at rv's own name (N10)"
assert_match "$RUN_OUT" "  ssh_config +skipped .*OpenSSH needs -i $HOME/.ssh/id_ed25519_rv" "no ssh config: the -i hint"
assert_contains "$(<"$IT_DIR/trace")" "has no passphrase (--non-interactive)" "--non-interactive says the key has no passphrase"
assert_contains "$RUN_OUT" "scratch_root = $SCRATCH_DIR/.cache/rv" "the config written is shown"
assert_contains "$(<"$IT_DIR/trace")" "ssh: exec" "the trace shows the commands rv ran"
pass "rv init --non-interactive --password-stdin: every step done"

# known_hosts holds the server's key, with the fingerprint rv showed (as OpenSSH computes it).
want_fp=$(ssh-keygen -lf "$SSHD_DIR/host_key.pub" | awk '{print $2}')
assert_contains "$(<"$IT_DIR/first.txt")" "fingerprint=$want_fp" "the fingerprint shown is OpenSSH's"
grep -q "^\[127.0.0.1\]:$PORT " "$HOME/.ssh/known_hosts" || it_fail "known_hosts lacks [127.0.0.1]:$PORT" "$(cat "$HOME/.ssh/known_hosts")"
ssh-keygen -F "[127.0.0.1]:$PORT" -f "$HOME/.ssh/known_hosts" | grep -q "$(awk '{print $2}' "$SSHD_DIR/host_key.pub")" ||
  it_fail "known_hosts holds another key"
pass "known_hosts has the host's key ($want_fp)"

# The key: OpenSSH reads it, the modes are OpenSSH's.
key=$HOME/.ssh/id_ed25519_rv
[[ ! -e $HOME/.ssh/id_ed25519 ]] || it_fail "rv init wrote ~/.ssh/id_ed25519, a default key name (N10)"
assert_eq "600" "$(stat -c %a "$key")" "private key mode"
assert_eq "700" "$(stat -c %a "$HOME/.ssh")" "the .ssh directory mode"
ssh-keygen -y -f "$key" >"$IT_DIR/derived.pub" || it_fail "ssh-keygen cannot read the generated key"
assert_eq "$(cut -d' ' -f1-2 "$IT_DIR/derived.pub")" "$(cut -d' ' -f1-2 "$key.pub")" "the .pub matches the private key"
pass "an ed25519 key OpenSSH reads, 0600 in a 0700 ~/.ssh"

# authorized_keys on the cluster: once, 0600 in 0700.
auth=$USER_HOME/.ssh/authorized_keys
assert_eq "1" "$(grep -c "$(cut -d' ' -f2 "$key.pub")" "$auth")" "the key is in authorized_keys once"
assert_eq "600 700" "$(stat -c %a "$auth") $(stat -c %a "$USER_HOME/.ssh")" "authorized_keys and ~/.ssh modes"
ssh -o BatchMode=yes -o UserKnownHostsFile="$HOME/.ssh/known_hosts" -i "$key" -p "$PORT" "$USER_NAME@127.0.0.1" true ||
  it_fail "OpenSSH cannot log in with the installed key"
pass "authorized_keys has the key once; OpenSSH logs in with it"

# The config, and the caches on scratch.
cfg=$XDG_CONFIG_HOME/rv/config.json
assert_eq "$USER_NAME@127.0.0.1:$PORT" "$(jq -r .host "$cfg")" "config host"
assert_eq "$key" "$(jq -r .identity_file "$cfg")" "config identity_file"
assert_eq "rvacct" "$(jq -r .account "$cfg")" "config account (the default account)"
assert_eq "$SCRATCH_DIR/.cache/rv" "$(jq -r .scratch_root "$cfg")" "config scratch_root"
for d in huggingface pip uv torch; do
  [[ -d $SCRATCH_DIR/.cache/rv/$d ]] || it_fail "no cache dir $d on scratch"
done
[[ -d $USER_HOME/.rv/logs ]] || it_fail "rv's remote root was not created"
pass "config written (host, identity_file, account, scratch_root); caches on scratch"

run "$RV" exec id -un
assert_rc 0 "rv exec with the written config"
assert_eq "$USER_NAME" "$RUN_OUT" "rv exec runs as the test user"
pass "rv exec works with the config init wrote"

# ---- the password appears nowhere ----
for f in "$IT_DIR/argv" "$IT_DIR/trace" "$IT_DIR/first.txt"; do
  ! grep -qF -- "$PASSWORD" "$f" || it_fail "the password is in $f"
done
! grep -rqF -- "$PASSWORD" "$XDG_CONFIG_HOME" "$HOME" || it_fail "the password is in a file under the config or HOME"
[[ -s $IT_DIR/argv ]] || it_fail "no process argv was sampled"
pass "the password is in no file, no trace line and no process's argv"

# ---- second run: idempotent, no password needed ----
before=$(md5sum "$auth" "$HOME/.ssh/known_hosts" "$key" | awk '{print $1}')
run "$RV" --json "${init_args[@]}"
assert_rc 0 "the second rv init succeeds without a password"
assert_json '[.steps[] | select(.step == "host_key" or .step == "key" or .step == "install_key") | .status]' \
  '["unchanged","unchanged","unchanged"]' "nothing to redo"
assert_eq "$before" "$(md5sum "$auth" "$HOME/.ssh/known_hosts" "$key" | awk '{print $1}')" "files unchanged"
assert_json '[.steps[] | select(.step == "slurm") | .default_account, .account]' '["rvacct","rvacct"]' \
  "sacctmgr's default account, offered and taken"
assert_json '[.steps[] | select(.step == "storage") | .cache_root]' "[\"$SCRATCH_DIR/.cache/rv\"]" "the caches on scratch"
assert_json '.config.known_hosts' "\"$HOME/.ssh/known_hosts\"" "the config names the known_hosts file"
pass "a second run changes nothing and asks for no password (--json: accounts, caches)"

# ---- diagnosis ----
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run "$RV" init --non-interactive --host 127.0.0.1 --port "$closed" --ssh-config ''
assert_rc 255 "a closed port"
assert_contains "$RUN_ERR" "nothing listens on that port" "refused is diagnosed"
run "$RV" init --non-interactive --host no-such-host.invalid --ssh-config ''
assert_rc 255 "a name that does not resolve"
assert_contains "$RUN_ERR" "does not resolve" "DNS failure is diagnosed"
assert_contains "$RUN_ERR" "VPN" "with the VPN hint"
pass "unreachable hosts: refused and DNS failures named, exit 255"

HOME=$IT_DIR/home2 XDG_CONFIG_HOME=$IT_DIR/config2 run "$RV" init --non-interactive --host "$USER_NAME@127.0.0.1" --port "$PORT" --ssh-config '' \
  --host-key-fingerprint SHA256:AAAAwrongwrongwrongwrongwrongwrongwrongwrong
assert_rc 252 "a pinned fingerprint that does not match"
assert_contains "$RUN_ERR" "$want_fp" "names the key offered"
[[ ! -e $IT_DIR/home2/.ssh/known_hosts ]] || it_fail "a refused key was written to known_hosts"
HOME=$IT_DIR/home2 XDG_CONFIG_HOME=$IT_DIR/config2 run "$RV" init --non-interactive --host "$USER_NAME@127.0.0.1" --port "$PORT" --ssh-config ''
assert_rc 253 "an unknown host key without --yes"
assert_contains "$RUN_ERR" "--yes" "says how to accept it"
pass "host key: a wrong pin is refused (252), an unconfirmed key is not trusted (253)"

# ---- N10: interactive rv init on a terminal (tmux): the new key with a passphrase, at rv's own name ----
# A laptop whose ~/.ssh/id_ed25519 is a link to a key on a volume that is not mounted, beside its
# .pub: find_default_key does not take it, and the old rv init generated at that name (and
# failed on the .pub, or wrote through nothing). Now: ~/.ssh/id_ed25519_rv, with the passphrase
# typed twice; both old files byte-identical; the ssh config names the key for the host, so that
# OpenSSH's `ssh` (no -i) and rv find it; verify asks the passphrase on the terminal.
if command -v tmux >/dev/null; then
  home7=$IT_DIR/home7
  mkdir -p -m 700 "$home7/.ssh"
  ln -s /nonexistent-volume/id_ed25519 "$home7/.ssh/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C 'old@laptop' -f "$IT_DIR/old_key" && cp "$IT_DIR/old_key.pub" "$home7/.ssh/id_ed25519.pub"
  old_files=$(readlink "$home7/.ssh/id_ed25519"; md5sum <"$home7/.ssh/id_ed25519.pub")
  PASSPHRASE="init pass $$ phrase"
  IT_TMUX_SOCK=rv-it-init-$$
  tm new-session -d -x 220 -y 50 -s init "bash --norc --noprofile"
  type_line init "$(printf '%q ' env HOME="$home7" XDG_CONFIG_HOME="$IT_DIR/config7" SSH_AUTH_SOCK= "$RV" \
    --ssh-config "$home7/.ssh/config" init --host "$USER_NAME@127.0.0.1" --port "$PORT" --yes --scratch none); echo RV-EXIT=\$?"
  wait_for 30 screen_has init "A key without a passphrase can be used by anyone who gets a copy of the file."
  wait_for 10 screen_has init "Passphrase for the new key $home7/.ssh/id_ed25519_rv (Enter: none) (not shown):"
  type_line init "$PASSPHRASE"
  wait_for 10 screen_has init "Same passphrase again (not shown):"
  type_line init "$PASSPHRASE"
  wait_for 30 screen_has init "Password for $USER_NAME@127.0.0.1:$PORT (not shown):"
  type_line init "$PASSWORD"
  wait_for 30 screen_has init "Enter passphrase for key '$home7/.ssh/id_ed25519_rv':"
  type_line init "$PASSPHRASE"
  wait_for 60 rv_ended init
  init_screen=$(screen init)
  tm kill-server
  [[ $(sed -n 's/^RV-EXIT=\([0-9][0-9]*\)$/\1/p' <<<"$init_screen" | tail -n1) == 0 ]] ||
    it_fail "interactive rv init failed" "$init_screen"
  assert_contains "$init_screen" "checking the new key: type its passphrase once more" "verify says why it asks"
  assert_match "$init_screen" "  ssh_config +done +detail=added Host 127.0.0.1 / IdentityFile $home7/.ssh/id_ed25519_rv" \
    "the ssh config step"
  assert_not_contains "$init_screen" "$PASSPHRASE" "the passphrase is not echoed"
  assert_not_contains "$init_screen" "$PASSWORD" "the password is not echoed"
  new_key=$home7/.ssh/id_ed25519_rv
  assert_eq "$old_files" "$(readlink "$home7/.ssh/id_ed25519"; md5sum <"$home7/.ssh/id_ed25519.pub")" \
    "~/.ssh/id_ed25519 (a link) and its .pub are byte-identical"
  assert_eq "600" "$(stat -c %a "$new_key")" "the new key's mode"
  ! ssh-keygen -y -P '' -f "$new_key" >/dev/null 2>&1 || it_fail "the new key has no passphrase"
  assert_eq "$(cut -d' ' -f1-2 "$new_key.pub")" "$(ssh-keygen -y -P "$PASSPHRASE" -f "$new_key" | cut -d' ' -f1-2)" \
    "ssh-keygen opens the key with the passphrase typed"
  assert_eq "$new_key" "$(jq -r .identity_file "$IT_DIR/config7/rv/config.json")" "rv's config names the key"
  assert_eq "1" "$(grep -cx "  IdentityFile $new_key" "$home7/.ssh/config")" "the ssh config names the key once"
  ! grep -rqF -- "$PASSPHRASE" "$home7" "$IT_DIR/config7" || it_fail "the passphrase is in a file"
  # OpenSSH's own ssh, no -i and no password: the ssh config rv wrote gives it the key.
  printf '#!/bin/sh\nprintf "%%s\\n" %q\n' "$PASSPHRASE" >"$IT_DIR/askpass-pp" && chmod 700 "$IT_DIR/askpass-pp"
  SSH_ASKPASS=$IT_DIR/askpass-pp SSH_ASKPASS_REQUIRE=force SSH_AUTH_SOCK='' setsid -w ssh -F "$home7/.ssh/config" \
    -o UserKnownHostsFile="$home7/.ssh/known_hosts" -o PasswordAuthentication=no -p "$PORT" "$USER_NAME@127.0.0.1" true ||
    it_fail "OpenSSH's ssh does not log in with the key the ssh config names"
  # rv, later, with no terminal: the passphrase from SSH_ASKPASS.
  HOME=$home7 XDG_CONFIG_HOME=$IT_DIR/config7 SSH_ASKPASS=$IT_DIR/askpass-pp SSH_ASKPASS_REQUIRE=force SSH_AUTH_SOCK='' \
    run setsid -w "$RV" exec id -un
  assert_rc 0 "rv exec with the protected key"
  assert_eq "$USER_NAME" "$RUN_OUT" "rv exec logs in with the protected key"
  # Run again: nothing added twice.
  HOME=$home7 XDG_CONFIG_HOME=$IT_DIR/config7 SSH_ASKPASS=$IT_DIR/askpass-pp SSH_ASKPASS_REQUIRE=force SSH_AUTH_SOCK='' \
    run setsid -w "$RV" --json init --non-interactive --host "$USER_NAME@127.0.0.1" --port "$PORT" --scratch none
  assert_rc 0 "rv init again"
  assert_json '[.steps[] | select(.step == "key" or .step == "install_key" or .step == "ssh_config") | .status]' \
    '["unchanged","unchanged","unchanged"]' "the second run changes nothing"
  assert_eq "1" "$(grep -cx "  IdentityFile $new_key" "$home7/.ssh/config")" "the ssh config still names the key once"
  pass "interactive rv init: a key with a passphrase (typed twice) at ~/.ssh/id_ed25519_rv, the old id_ed25519 and .pub byte-identical; the ssh config names it (OpenSSH's ssh logs in), rv exec too; a second run changes nothing"
else
  printf '%s: SKIP (part): no tmux for the interactive rv init\n' "$IT_NAME" >&2
fi

# ---- #24 item 8: an ~/.ssh/config alias whose IdentityFile works: no new key, none written ----
# A fresh laptop (home3) whose ssh config names the key installed above; rv init used to generate
# ~/.ssh/id_ed25519, report "the host already accepts the key" (it was the alias's) and write the
# new key into the config, which the cluster refused (exit 254) without that ssh config.
home3=$IT_DIR/home3
mkdir -p "$home3/.ssh"
cp "$key" "$IT_DIR/alias_key"
chmod 600 "$IT_DIR/alias_key"
cat >"$IT_DIR/alias_config" <<CONF
Host rvinit-alias
  HostName 127.0.0.1
  Port $PORT
  User $USER_NAME
  IdentityFile $IT_DIR/alias_key
CONF
HOME=$home3 XDG_CONFIG_HOME=$IT_DIR/config3 run "$RV" --ssh-config "$IT_DIR/alias_config" init --non-interactive \
  --host rvinit-alias --yes --scratch none
assert_rc 0 "rv init with a working alias"
! compgen -G "$home3/.ssh/id_ed25519*" >/dev/null || it_fail "rv init generated a key although the alias's key works"
assert_match "$RUN_OUT" "  key +unchanged .*the host accepts a key of yours" "the working key is used"
cfg3=$IT_DIR/config3/rv/config.json
assert_eq "" "$(jq -r '.identity_file // ""' "$cfg3")" "the config names no key of its own"
assert_eq "$IT_DIR/alias_config" "$(jq -r .ssh_config "$cfg3")" "--ssh-config is saved"
HOME=$home3 XDG_CONFIG_HOME=$IT_DIR/config3 run "$RV" exec id -un
assert_rc 0 "rv exec with the config init wrote (no --ssh-config flag)"
assert_eq "$USER_NAME" "$RUN_OUT" "rv exec logs in through the alias's key"
pass "a key the host accepts is used: nothing generated, --ssh-config saved, rv exec works"

# ---- a host that asks for a second factor (the testbed's rvtb-2fa: password, then a TOTP code) ----
if [[ -n ${TB_2FA_PORT:-} ]] && [[ -e $TB_DIR/sshd-2fa.pid ]] && kill -0 "$(cat "$TB_DIR/sshd-2fa.pid")" 2>/dev/null; then
  rm -rf "$USER_HOME/.ssh" # no key yet: keyboard-interactive alone, PAM asks the password then the code
  printf '%s\n' "$PASSWORD" >"$IT_DIR/pw" && chmod 600 "$IT_DIR/pw"
  cat >"$IT_DIR/askpass" <<ASK
#!/bin/sh
printf '%s\n' "\$1" >>"$IT_DIR/askpass.log"
case \$1 in
  *One-time*) exec "$TB_TOTP" ;;
  *) cat "$IT_DIR/pw" ;; # the key's later logins: PAM asks this user's password again
esac
ASK
  chmod 755 "$IT_DIR/askpass"
  log2=$TB_DIR/log/sshd-2fa.log
  accepted_before=$(grep -c 'Accepted keyboard-interactive/pam for rvinit' "$log2" || true)
  failed_before=$(grep -c 'Failed keyboard-interactive/pam for rvinit' "$log2" || true)
  # `run` reads stdin from /dev/null: the password comes from the environment.
  HOME=$IT_DIR/home4 XDG_CONFIG_HOME=$IT_DIR/config4 SSH_ASKPASS=$IT_DIR/askpass SSH_ASKPASS_REQUIRE=force \
    RV_INIT_PASSWORD=$PASSWORD run "$RV" init --non-interactive --host "$USER_NAME@127.0.0.1" \
    --port "$TB_2FA_PORT" --ssh-config '' --scratch "$SCRATCH_DIR" --yes
  assert_rc 0 "rv init against the second-factor host"
  assert_contains "$(head -1 "$IT_DIR/askpass.log")" "One-time password" \
    "the first prompt asked of the user is the code's: the password answered PAM's password prompt itself"
  assert_eq "0" "$(($(grep -c 'Failed keyboard-interactive/pam for rvinit' "$log2" || true) - failed_before))" \
    "no refused keyboard-interactive attempt (the password never went to the code prompt)"
  accepted=$(($(grep -c 'Accepted keyboard-interactive/pam for rvinit' "$log2" || true) - accepted_before))
  ((accepted >= 1)) || it_fail "no keyboard-interactive login was accepted"
  pass "rv init on a second-factor host: the password once (PAM's password prompt), then the code from SSH_ASKPASS; $accepted login(s), none refused"

  # N1 (third UX review): the host accepts the user's key (the alias's) and only the code is
  # wrong. The code is asked again (3 tries, as OpenSSH does), then init stops: no key generated,
  # no password asked. Then one wrong code and a right one: init goes on with the alias's key.
  cat >"$IT_DIR/askpass-wrong" <<ASK
#!/bin/sh
printf '%s\n' "\$1" >>"$IT_DIR/askpass-wrong.log"
if [ -e "$IT_DIR/askpass-right" ] && [ "\$(wc -l <"$IT_DIR/askpass-wrong.log")" -gt 1 ]; then exec "$TB_TOTP"; fi
echo 000000
ASK
  chmod 755 "$IT_DIR/askpass-wrong"
  mkdir -p "$IT_DIR/home5"
  HOME=$IT_DIR/home5 XDG_CONFIG_HOME=$IT_DIR/config5 SSH_ASKPASS=$IT_DIR/askpass-wrong SSH_ASKPASS_REQUIRE=force \
    RV_INIT_PASSWORD=never-asked run "$RV" init --non-interactive --ssh-config "$TB_SSH_CONFIG" --host "$TB_2FA_HOST" \
    --scratch "$SCRATCH_DIR" --yes
  assert_rc 254 "rv init with a wrong code after the key was accepted"
  assert_eq 3 "$(grep -c 'One-time' "$IT_DIR/askpass-wrong.log")" "the code is asked 3 times, then init stops"
  assert_contains "$RUN_ERR" "only the second factor failed" "the hint says the key was fine and the code was not"
  assert_not_contains "$RUN_ERR" "generated an ed25519 key" "nothing is generated"
  ! compgen -G "$IT_DIR/home5/.ssh/id_ed25519*" >/dev/null || it_fail "a key was generated after the host had accepted the user's key"
  pass "a refused code after the key was accepted: asked 3 times, init stops, no key generated (N1)"

  : >"$IT_DIR/askpass-wrong.log"
  touch "$IT_DIR/askpass-right"
  scratch5=$(mktemp -d /tmp/rv-it-init-scratch5.XXXXXX)
  chown "$TB_SSH_USER" "$scratch5"
  HOME=$IT_DIR/home5 XDG_CONFIG_HOME=$IT_DIR/config5 SSH_ASKPASS=$IT_DIR/askpass-wrong SSH_ASKPASS_REQUIRE=force \
    RV_INIT_PASSWORD=never-asked run "$RV" init --non-interactive --ssh-config "$TB_SSH_CONFIG" --host "$TB_2FA_HOST" \
    --scratch "$scratch5" --yes
  rm -rf "$scratch5"
  assert_rc 0 "rv init with one wrong code, then a right one"
  assert_match "$(head -2 "$IT_DIR/askpass-wrong.log" | tr '\n' ' ')" "One-time.*One-time" \
    "the code was asked again after the refusal"
  ! compgen -G "$IT_DIR/home5/.ssh/id_ed25519*" >/dev/null || it_fail "a key was generated though the alias's key works"
  pass "one refused code, then the right one: init goes on with the user's key, nothing generated"

  # N2 (third UX review): the first day asks one code. init's own login (the user's key, then the
  # code) goes on through every step and is handed to the held connection, which the next commands
  # find (the same name: the options they compute from the config init wrote).
  : >"$IT_DIR/askpass.log"
  mkdir -p "$IT_DIR/home6"
  n2() {
    HOME=$IT_DIR/home6 XDG_CONFIG_HOME=$IT_DIR/config6 SSH_ASKPASS=$IT_DIR/askpass SSH_ASKPASS_REQUIRE=force \
      RV_CONNECTION_PERSIST=5m run "$RV" "$@"
  }
  n2 init --non-interactive --ssh-config "$TB_SSH_CONFIG" --host "$TB_2FA_HOST" --scratch none --yes
  assert_rc 0 "rv init on the second-factor host with the alias's key"
  assert_eq 1 "$(grep -c 'One-time' "$IT_DIR/askpass.log")" "rv init asks one code"
  n2 exec id -un
  assert_rc 0 "rv exec after init"
  assert_eq "$TB_SSH_USER" "$RUN_OUT" "rv exec runs through init's held connection"
  n2 doctor
  assert_eq 1 "$(grep -c 'One-time' "$IT_DIR/askpass.log")" "rv exec and rv doctor after init ask no code"
  n2 disconnect
  pass "the first day asks one code: init's login is held and rv exec and rv doctor use it (N2)"
fi
