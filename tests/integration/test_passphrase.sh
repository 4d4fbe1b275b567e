#!/usr/bin/env bash
# A key with a passphrase (security review 3, N10), driven the way a person does it: rv in a tmux
# pseudo-terminal against the testbed's login node, with an encrypted key made by `ssh-keygen -N`
# (its .pub added to rvtest's authorized_keys for the test, removed after). Checks: the passphrase
# is asked on the terminal ("Enter passphrase for key 'PATH': ", not echoed) and logs in; it is in no
# argv, environment, trace or screen; a wrong one 3 times is exit 254 with one error line and the
# ssh-add hint; Enter alone skips the key; with no terminal (setsid) or BatchMode yes rv asks nothing
# and says why, with the ssh-add hint; ssh-agent holding the key logs in without a prompt; SSH_ASKPASS
# answers it with no terminal; with connection_persist it is typed once. ~25 s.
# testbed-lock: shared (submits no job; one line of rvtest's authorized_keys, its own, removed after)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

command -v tmux >/dev/null || it_fail "tmux is not installed (scripts/lib.sh installs it)"
command -v ssh-keygen >/dev/null && command -v ssh-agent >/dev/null || it_fail "needs ssh-keygen and ssh-agent"

IT_TMUX_SOCK=rv-it-pass-$$
MARK=rv-it-passphrase-$$
PASSPHRASE="correct horse $$ battery"
KEY=$IT_DIR/keys/id_pass
mkdir -p "$IT_DIR/keys" "$IT_DIR/home"
export HOME=$IT_DIR/home # no default keys of the machine's user: only the test's key is offered
unset SSH_AUTH_SOCK SSH_AGENT_PID SSH_ASKPASS SSH_ASKPASS_REQUIRE
ssh-keygen -q -t ed25519 -N "$PASSPHRASE" -C "$MARK" -f "$KEY"
agent_pid=
cleanup_pass() {
  tm kill-server 2>/dev/null || true
  [[ -z $agent_pid ]] || kill "$agent_pid" 2>/dev/null || true
  remote "sed -i '/ $MARK\$/d' ~/.ssh/authorized_keys" || true
}
trap 'cleanup_pass; it_cleanup' EXIT
remote 'cat >>~/.ssh/authorized_keys' <"$KEY.pub"

# The testbed's login node under aliases of the test's own config, each naming only the test's key.
CFG=$IT_DIR/ssh_config
for alias in rvpk rvpk-batch rvpk-auto; do
  printf 'Host %s\n  HostName %s\n  Port %s\n  User %s\n  IdentityFile %s\n  UserKnownHostsFile %s\n' \
    "$alias" "$TB_SSH_HOST" "$TB_SSH_PORT" "$TB_SSH_USER" "$KEY" "$TB_SSH_KNOWN_HOSTS" >>"$CFG"
  case $alias in
    rvpk) printf '  IdentitiesOnly yes\n' >>"$CFG" ;;
    rvpk-batch) printf '  IdentitiesOnly yes\n  BatchMode yes\n' >>"$CFG" ;;
    rvpk-auto) ;; # libssh's own walk (agent, IdentityFile, defaults)
  esac
done
ssh -F "$CFG" -o BatchMode=yes rvpk true 2>/dev/null && it_fail "the key logged in without its passphrase"
rv_cmd() { printf '%q ' "$RV" --ssh-config "$CFG" "$@"; }
prompt="Enter passphrase for key '$KEY':" # the screen drops the trailing blank
prompts() { screen "$1" | grep -cF -- "Enter passphrase for key '$KEY'" || true; }
# shellcheck disable=SC2317  # called through wait_for
prompted() { (($(prompts "$1") >= $2)); }

tm new-session -d -x 220 -y 50 -s pass "bash --norc --noprofile"

# ---- on a terminal: asked, typed (not shown), logged in; the passphrase nowhere else ----
for alias in rvpk rvpk-auto; do
  tm new-window -t pass -n "$alias" "bash --norc --noprofile"
  type_line "pass:$alias" "$(rv_cmd -vvv --host "$alias" exec sh -c 'echo logged-in-as-$(id -un); sleep 3') 2>$IT_DIR/trace-$alias; echo RV-EXIT=\$?"
  wait_for 30 screen_has "pass:$alias" "$prompt"
  type_line "pass:$alias" "$PASSPHRASE"
  wait_for 30 screen_has "pass:$alias" "logged-in-as-$TB_SSH_USER"
  # While the command runs: the passphrase in no process's argv or environment.
  for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
    if tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "$PASSPHRASE"; then it_fail "the passphrase is in $f"; fi
  done
  wait_for 30 rv_ended "pass:$alias"
  assert_eq 0 "$(rv_exit "pass:$alias")" "$alias: rv exec with the passphrase typed"
  assert_eq 1 "$(prompts "pass:$alias")" "$alias: asked once"
  assert_not_contains "$(screen "pass:$alias")" "$PASSPHRASE" "$alias: the passphrase is not echoed"
  ! grep -qF -- "$PASSPHRASE" "$IT_DIR/trace-$alias" || it_fail "$alias: the passphrase is in rv's -vvv trace"
  assert_contains "$(<"$IT_DIR/trace-$alias")" "unlocked with its passphrase" "$alias: the trace says how the key was used"
done
pass "a terminal: \"$prompt\" asked once, the passphrase typed (not echoed) logs in (IdentitiesOnly and libssh's walk); in no argv, environment, trace"

# ---- a wrong passphrase 3 times: exit 254, one error line with the hint ----
tm new-window -t pass -n wrong "bash --norc --noprofile"
type_line pass:wrong "$(rv_cmd --host rvpk exec true); echo RV-EXIT=\$?"
for i in 1 2 3; do
  wait_for 30 prompted pass:wrong "$i"
  type_line pass:wrong "not the passphrase $i"
done
wait_for 30 rv_ended pass:wrong
assert_eq 254 "$(rv_exit pass:wrong)" "3 wrong passphrases"
assert_eq 3 "$(prompts pass:wrong)" "asked 3 times"
errors=$(screen pass:wrong | grep -c '^rv: error:' || true)
assert_eq 1 "$errors" "one error line"
assert_contains "$(screen pass:wrong)" "wrong passphrase for key '$KEY' (3 tries)" "the error says what was wrong"
assert_contains "$(screen pass:wrong)" "ssh-add $KEY" "the hint names ssh-add"
pass "a wrong passphrase 3 times: exit 254, \"wrong passphrase for key '...' (3 tries)\" and the ssh-add hint"

# ---- Enter alone skips the key (as OpenSSH); BatchMode yes asks nothing ----
tm new-window -t pass -n skip "bash --norc --noprofile"
type_line pass:skip "$(rv_cmd --host rvpk exec true); echo RV-EXIT=\$?"
wait_for 30 screen_has pass:skip "$prompt"
type_line pass:skip ""
wait_for 30 rv_ended pass:skip
assert_eq 254 "$(rv_exit pass:skip)" "Enter alone: the key skipped"
assert_eq 1 "$(prompts pass:skip)" "Enter alone: asked once"
tm new-window -t pass -n batch "bash --norc --noprofile"
type_line pass:batch "$(rv_cmd --host rvpk-batch exec true); echo RV-EXIT=\$?"
wait_for 30 rv_ended pass:batch
assert_eq 254 "$(rv_exit pass:batch)" "BatchMode yes"
assert_eq 0 "$(prompts pass:batch)" "BatchMode yes: no prompt"
assert_contains "$(screen pass:batch)" "BatchMode yes forbids asking it" "BatchMode: says why"
pass "Enter alone skips the key (exit 254); BatchMode yes asks nothing and says so"

# ---- no terminal: nothing asked, the reason and the ssh-add hint, fast ----
run setsid -w "$RV" --ssh-config "$CFG" --host rvpk exec true
assert_rc 254 "no terminal"
assert_contains "$RUN_ERR" "the key '$KEY' has a passphrase, and there is no terminal to ask it on" "says why"
assert_contains "$RUN_ERR" "ssh-add $KEY" "the hint names ssh-add"
assert_faster_than 15 "no wait for an answer"
pass "no terminal: exit 254 in ${RUN_SECS}s, the key named with the ssh-add hint"

# ---- SSH_ASKPASS answers it with no terminal (OpenSSH's convention) ----
printf '%s\n' "$PASSPHRASE" >"$IT_DIR/keys/pass" && chmod 600 "$IT_DIR/keys/pass"
printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>%q\ncat %q\n' "$IT_DIR/askpass.log" "$IT_DIR/keys/pass" >"$IT_DIR/askpass"
chmod 700 "$IT_DIR/askpass"
run setsid -w env SSH_ASKPASS="$IT_DIR/askpass" SSH_ASKPASS_REQUIRE=force "$RV" --ssh-config "$CFG" --host rvpk exec echo askpass-ok
assert_rc 0 "SSH_ASKPASS"
assert_eq askpass-ok "$RUN_OUT" "SSH_ASKPASS: logged in"
assert_contains "$(<"$IT_DIR/askpass.log")" "$prompt" "SSH_ASKPASS was given the prompt"
pass "SSH_ASKPASS (SSH_ASKPASS_REQUIRE=force) answers the passphrase with no terminal"

# ---- ssh-agent holding the key: no prompt, even with no terminal ----
eval "$(ssh-agent -s)" >/dev/null
agent_pid=$SSH_AGENT_PID
SSH_ASKPASS="$IT_DIR/askpass" SSH_ASKPASS_REQUIRE=force setsid -w ssh-add "$KEY" 2>/dev/null || it_fail "ssh-add failed"
: >"$IT_DIR/askpass.log"
run setsid -w "$RV" --ssh-config "$CFG" --host rvpk exec echo agent-ok
assert_rc 0 "the agent holds the key"
assert_eq agent-ok "$RUN_OUT" "the agent: logged in"
[[ ! -s $IT_DIR/askpass.log ]] || it_fail "the passphrase was asked although the agent holds the key"
pass "ssh-agent holding the key logs in with no prompt"

# ---- the held connection: the passphrase asked once, later commands (no terminal) use that login ----
kill "$agent_pid" 2>/dev/null || true
agent_pid=
unset SSH_AUTH_SOCK SSH_AGENT_PID
tm new-window -t pass -n held "bash --norc --noprofile"
type_line pass:held "$(printf '%q ' env RV_CONNECTION_PERSIST=5m)$(rv_cmd --host rvpk exec echo held-one); echo RV-EXIT=\$?"
wait_for 30 screen_has pass:held "$prompt"
type_line pass:held "$PASSPHRASE"
wait_for 30 rv_ended pass:held
assert_eq 0 "$(rv_exit pass:held)" "the first command with connection_persist"
run setsid -w env RV_CONNECTION_PERSIST=5m "$RV" --ssh-config "$CFG" --host rvpk exec echo held-two
assert_rc 0 "a later command with no terminal and no agent"
assert_eq held-two "$RUN_OUT" "it ran through the held connection"
run "$RV" --ssh-config "$CFG" --host rvpk disconnect
pass "connection_persist: the passphrase typed once; a later command with no terminal and no agent runs through the held login"
