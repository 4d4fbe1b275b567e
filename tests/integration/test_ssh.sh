#!/usr/bin/env bash
# `rv ssh` (#14) on the real cluster through the loopback login node: a command runs inside the
# running request's allocation (a job step on its node) with its argv byte for byte and its exit
# status, in the job's directory (the request's snapshot: N6); the newest running request is the
# default; `--node 1` reaches the second node of a 2-node job; a shell opens in a PTY (driven by
# script(1)), in the job's directory too; without a terminal a shell is refused.
# `rv ssh --print-config --install` writes a managed block into an ssh config, keeps every other byte,
# replaces the block on the next install, and OpenSSH reads it (ssh -G). About 30 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-ssh-$$
cleanup_ssh() {
  local ids
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_ssh; it_cleanup' EXIT
running() { [[ $(squeue -h -n "$1" -t R -o %i | wc -l) -ge 1 ]]; }

run ssh_rv --json run -g 16 -t a100 --time 5m --name "$NAME-two" -- sleep 300
assert_rc 0 "a 2-node request"
two=$(jq -r .id "$IT_DIR/out")
wait_for 60 running "$NAME-two"
# A project's script: the request runs in its snapshot, and `rv ssh REQ -- CMD` must too (N6).
mkdir "$IT_DIR/proj" && cd "$IT_DIR/proj" && git init -q .
# shellcheck disable=SC2016  # the script's own text
printf 'sleep "$1"\n' >hold.sh
run ssh_rv --json run -g 1 -t a6000 --time 5m --name "$NAME-one" -- bash hold.sh 300
assert_rc 0 "a 1-GPU request"
cd "$IT_DIR"
one=$(jq -r .id "$IT_DIR/out")
wd_one=$(jq -r .workdir "$(record_of "$one")")
[[ -n $wd_one && $wd_one != null ]] || it_fail "the synced request recorded no workdir" "$(cat "$(record_of "$one")")"
wait_for 60 running "$NAME-one"
job_one=$(squeue -h -n "$NAME-one" -t R -o %i)
job_two=$(squeue -h -n "$NAME-two" -t R -o %i)

# shellcheck disable=SC2016  # expanded on the node
run ssh_rv ssh -- 'echo "$SLURMD_NODENAME $SLURM_JOB_ID step=$SLURM_STEP_ID"'
assert_rc 0 "rv ssh -- CMD"
assert_eq "a6000-1 $job_one step=0" "$RUN_OUT" "the newest running request, inside its allocation"
run ssh_rv ssh "$one" -- printf '%s|' 'a b' '$HOME' "it's" 'ü\n'
assert_eq "a b|\$HOME|it's|ü\\n|" "$RUN_OUT" "several words are an exact argv, byte for byte"
run ssh_rv ssh "$one" -- 'exit 7'
assert_rc 7 "the command's exit status"
pass "rv ssh REQ -- CMD runs in the allocation, argv intact, its exit status"

run ssh_rv ssh "$one" -- pwd
assert_eq "$wd_one" "$RUN_OUT" "rv ssh REQ -- CMD runs in the job's directory (its snapshot), not \$HOME"
run ssh_rv ssh "$one" -- cat hold.sh
assert_rc 0 "a path relative to the project"
# shellcheck disable=SC2016  # the file's own text
assert_eq 'sleep "$1"' "$RUN_OUT" "a path relative to the project reaches the snapshot's file"
# shellcheck disable=SC2016  # expanded on the node
run ssh_rv ssh "$one" -- 'cd .. && test -d "$OLDPWD" && echo "from $OLDPWD"'
assert_eq "from $wd_one" "$RUN_OUT" "a shell line starts there too"
run ssh_rv ssh "$two" -- pwd
# shellcheck disable=SC2016  # the login node's $HOME
assert_eq "$(remote 'echo $HOME')" "$RUN_OUT" "a request with no directory of its own: the home directory, as its job"
pass "rv ssh REQ -- CMD runs where the job runs: the snapshot (N6), or home for an unsynced request"

# shellcheck disable=SC2016
run ssh_rv ssh "$two" --node 1 -- 'echo "$SLURMD_NODENAME $SLURM_JOB_ID"'
assert_eq "a100-2 $job_two" "$RUN_OUT" "--node 1 is the second node"
run ssh_rv ssh "$two" --node 2 -- true
assert_rc 2 "--node past the job's nodes"
assert_contains "$RUN_ERR" "rv: error: --node 2: job $job_two has 2 node(s) (a100-[1-2])" "names the nodes"
pass "--node K picks the node of a multi-node job"

run ssh_rv --json ssh "$one" -- 'echo out; echo err >&2; exit 3'
assert_rc 3 "--json keeps the exit status"
assert_json '.stdout' '"out\n"' "stdout in the document"
assert_json '.exit_code' '3' "exit_code in the document"
assert_json '.node' '"a6000-1"' "node in the document"

run ssh_rv ssh "$one"
assert_rc 2 "a shell without a terminal"
assert_contains "$RUN_ERR" "rv: error: rv ssh opens a shell only on a terminal" "is refused at once"
assert_contains "$RUN_ERR" "rv: hint: give a command: rv ssh [REQUEST] -- CMD..." "with the way to run a command"

# A shell in a PTY: script(1) gives rv a terminal and types into it.
# shellcheck disable=SC2016
printf 'echo "tty=$(tty | cut -c1-8) node=$SLURMD_NODENAME cwd=$(pwd)"\nexit 5\n' >"$IT_DIR/typed"
rc=0
script -qec "$(printf '%q ' "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" ssh "$one")" /dev/null \
  <"$IT_DIR/typed" >"$IT_DIR/pty.out" 2>&1 || rc=$?
assert_contains "$(tr -d '\r' <"$IT_DIR/pty.out")" "tty=/dev/pts node=a6000-1 cwd=$wd_one" \
  "the shell has a PTY on the node, in the job's directory"
[[ $rc == 5 ]] || it_fail "the shell's exit status 5 came back as $rc" "$(cat "$IT_DIR/pty.out")"
pass "rv ssh REQ opens a shell in a PTY on the node; its exit status comes back"

# ---- --config and --install ----
run ssh_rv ssh --print-config "$one"
assert_rc 0 "rv ssh --print-config"
assert_contains "$RUN_OUT" "Host rv-$one" "a Host for the request"
assert_contains "$RUN_OUT" "ProxyJump $TB_HOST" "through the login node's alias"
cfg=$IT_DIR/ssh_config
{
  printf '# mine\r\nHost other\n  Port 2200\n\n'
  cat "$TB_SSH_CONFIG"
} >"$cfg"
cp "$cfg" "$IT_DIR/before"
run ssh_rv ssh --print-config --install --file "$cfg" "$two"
assert_rc 0 "--install"
[[ $(head -c "$(stat -c %s "$IT_DIR/before")" "$cfg") == $(cat "$IT_DIR/before") ]] || it_fail "--install changed the file's own lines"
run ssh_rv ssh --print-config --install --file "$cfg" "$one"
assert_rc 0 "--install again"
[[ $(grep -c '^# BEGIN rv$' "$cfg") == 1 ]] || it_fail "two managed blocks" "$(cat "$cfg")"
assert_not_contains "$(cat "$cfg")" "rv-$two" "the old block is replaced"
assert_eq "$(cat "$IT_DIR/before")" "$(sed '/^# BEGIN rv$/,/^# END rv$/d' "$cfg")" "every other byte is kept"
ssh -G -F "$cfg" "rv-$one" >"$IT_DIR/g" || it_fail "OpenSSH cannot read the installed config"
assert_contains "$(cat "$IT_DIR/g")" "proxyjump $TB_HOST" "OpenSSH sees the ProxyJump"
assert_contains "$(cat "$IT_DIR/g")" "hostname 127.0.0.1" "and the node's address"
pass "--print-config --install writes one managed block, keeps the rest, OpenSSH reads it"

ssh_rv stop "$one" >/dev/null
ssh_rv stop "$two" >/dev/null
run ssh_rv ssh -- true
assert_rc 2 "no running request"
assert_contains "$RUN_ERR" "rv: error: no request of yours has a running job" "says so"
pass "with nothing running, rv ssh says so"
