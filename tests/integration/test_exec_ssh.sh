#!/usr/bin/env bash
# rv exec through the loopback login node (libssh): config aliases, exit codes, quoting, JSON,
# timeouts, and every refusal (unknown host key, changed host key, bad key, closed port).
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"


# An ssh config alias (HostName, Port, User, IdentityFile, UserKnownHostsFile) is honoured.
run ssh_rv exec sinfo
assert_rc 0 "rv exec sinfo over ssh"
for p in gpu-a100 gpu-a6000 gpu-v100 gpu-h200 gpu-mig cpu; do
  assert_contains "$RUN_OUT" "$p" "sinfo over ssh lists partition $p"
done
pass "rv exec sinfo through the loopback login node lists the partitions"

run ssh_rv exec whoami
assert_eq "rvtest" "$RUN_OUT" "commands run as the ssh config's User"
pass "the config's User is used"

# The same through [user@]host:port and explicit key/known_hosts, with no ssh config at all.
run "$RV" --ssh-config '' --host "$TB_SSH_USER@$TB_SSH_HOST:$TB_SSH_PORT" -i "$TB_SSH_KEY" \
  --known-hosts "$TB_SSH_KNOWN_HOSTS" exec squeue --version
assert_rc 0 "user@host:port with -i and --known-hosts"
assert_contains "$RUN_OUT" "slurm" "squeue --version over ssh"
pass "user@host:port with an explicit key and known_hosts"

# RV_HOST and the config file are layered like flags.
mkdir -p "$XDG_CONFIG_HOME/rv"
printf '{"host": "%s", "ssh_config": "%s"}\n' "$TB_HOST" "$TB_SSH_CONFIG" >"$XDG_CONFIG_HOME/rv/config.json"
run "$RV" exec hostname
assert_rc 0 "host from the config file"
run "$RV" config show
assert_contains "$RUN_OUT" "(file)" "config show names the file origin"
RV_HOST=nosuchalias.invalid run "$RV" --connect-timeout 3s exec true
assert_rc 255 "RV_HOST overrides the config file (and an unresolvable host is exit 255)"
rm "$XDG_CONFIG_HOME/rv/config.json"
pass "host from the config file and RV_HOST"

# rv init's known_hosts (the config file's) must not override an alias's own UserKnownHostsFile
# (third UX review N8: a second cluster's alias then failed "not in known_hosts"). Here the config
# file pins an empty file and the alias names the testbed's: the alias's wins; --known-hosts with
# the empty file still replaces it (253).
: >"$IT_DIR/empty_known_hosts"
printf '{"ssh_config": "%s", "known_hosts": "%s"}\n' "$TB_SSH_CONFIG" "$IT_DIR/empty_known_hosts" \
  >"$XDG_CONFIG_HOME/rv/config.json"
RV_CONNECTION_PERSIST=0 run "$RV" --host "$TB_HOST" exec hostname
assert_rc 0 "the alias's UserKnownHostsFile counts beside the config file's known_hosts"
RV_CONNECTION_PERSIST=0 run "$RV" --host "$TB_HOST" --known-hosts "$IT_DIR/empty_known_hosts" exec true
assert_rc 253 "--known-hosts replaces the alias's file"
rm "$XDG_CONFIG_HOME/rv/config.json"
pass "rv init's known_hosts is a fallback: an alias's own UserKnownHostsFile wins, --known-hosts replaces both (N8)"

# Exit status, streams and JSON.
run ssh_rv exec -- 'echo out; echo err >&2; exit 7'
assert_rc 7 "remote exit status is propagated"
assert_eq "out" "$RUN_OUT" "stdout apart"
assert_eq "err" "$RUN_ERR" "stderr apart"
run ssh_rv --json exec -- 'echo out; echo err >&2; exit 3'
assert_rc 3 "--json keeps the exit status"
assert_json '[.exit_code, .stdout, .stderr]' '[3,"out\n","err\n"]' "--json shape"
pass "exit status, separate streams, --json"

# Arguments arrive byte for byte through the remote shell.
weird=$'a b  \'single\' "double" $HOME `id` $(id) \\ ; | & * ? [x] {a,b} ~ #\nline2\n\t\xc3\xb1 \xe6\x97\xa5'
run ssh_rv exec printf '%s' "$weird"
assert_rc 0 "printf of a nasty argument"
[[ $(<"$IT_DIR/out") == "$weird" ]] || it_fail "nasty argument changed on the way" "$(it_last_run)"
pass "spaces, quotes, \$, backticks, newlines and non-ASCII arrive intact"

# Timeouts.
run ssh_rv exec --timeout 1s -- 'sleep 20'
assert_rc 124 "--timeout exits 124"
assert_faster_than 5 "--timeout returns promptly"
pass "--timeout"

# Refusals, each with its own exit code and a one-line error.
ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/other"
printf '[%s]:%s %s\n' "$TB_SSH_HOST" "$TB_SSH_PORT" "$(cut -d' ' -f1,2 "$IT_DIR/other.pub")" >"$IT_DIR/kh_changed"
: >"$IT_DIR/kh_empty"
base=(--ssh-config '' --host "$TB_SSH_USER@$TB_SSH_HOST:$TB_SSH_PORT")

run "$RV" "${base[@]}" -i "$TB_SSH_KEY" --known-hosts "$IT_DIR/kh_changed" exec true
assert_rc 252 "a changed host key is refused"
assert_contains "$RUN_ERR" "CHANGED" "the message says the key changed"
pass "a wrong known_hosts entry is refused (252)"

run "$RV" "${base[@]}" -i "$TB_SSH_KEY" --known-hosts "$IT_DIR/kh_empty" exec true
assert_rc 253 "an unknown host is refused"
assert_contains "$RUN_ERR" "not in known_hosts" "the message says the host is unknown"
pass "an unknown host key is never accepted silently (253)"

HOME=$IT_DIR SSH_AUTH_SOCK='' run "$RV" "${base[@]}" -i "$IT_DIR/other" --known-hosts "$TB_SSH_KNOWN_HOSTS" exec true
assert_rc 254 "a key the server does not know is refused"
assert_contains "$RUN_ERR" "rv: hint:" "auth failure has a hint"
pass "authentication failure (254)"

run "$RV" --ssh-config '' --host "$TB_SSH_USER@127.0.0.1:1" --known-hosts "$TB_SSH_KNOWN_HOSTS" exec true
assert_rc 255 "a closed port is unreachable"
pass "unreachable host (255)"
