#!/usr/bin/env bash
# What a person does at a terminal, driven through tmux (a real pseudo-terminal, keys typed, the
# screen read back), on the real cluster through the loopback login node (issue #24):
# - `rv up -g 1 --time 5m` in a project: the race is won, a shell opens in the allocation (the job's
#   environment, the snapshot's directory), a typed command runs there, `exit` ends it, rv exits 0
#   and the allocation is released (regression from 0905b7f: "the command is empty", exit 2);
# - `rv ssh REQUEST` with no command: a shell on the job's node, typed into, its exit status back;
# - Ctrl-C while `rv up` waits for a GPU: rv exits 130 and nothing of the request stays queued.
# Three short allocations; about a minute on an idle cluster.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

command -v tmux >/dev/null || it_fail "tmux is not installed (scripts/lib.sh installs it)"
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-pty-$$
IT_TMUX_SOCK=rv-it-pty-$$
occupier=
cleanup_pty() {
  local ids
  tm kill-server 2>/dev/null || true
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  [[ -z $occupier ]] || scancel "$occupier" 2>/dev/null || true
}
trap 'cleanup_pty; it_cleanup' EXIT

# The value of "KEY=VALUE" in the line of window $1 that starts with $2.
field() { screen "$1" | grep -F -- "$2" | grep -v 'echo' | tail -n1 | tr ' ' '\n' | sed -n "s/^$3=//p"; }
newest_record() { find "$RV_STATE_DIR/requests" -name '*.json' -printf '%T@ %p\n' | sort -n | tail -n1 | cut -d' ' -f2-; }

# A login shell-less bash in each window, with this test's environment (tmux's server inherits it).
tm new-session -d -x 200 -y 50 -s up "bash --norc --noprofile"
tm set-option -g history-limit 5000 >/dev/null

# ---- rv up: a shell in the allocation, in the snapshot, with the job's environment ----
mkdir -p "$IT_DIR/proj/src"
printf 'print("hi")\n' >"$IT_DIR/proj/src/train.py"
printf '# none\n' >"$IT_DIR/proj/requirements.txt"
type_line up "cd $(printf '%q' "$IT_DIR/proj/src") && $(rv_line up -g 1 --time 5m --name "$NAME-up"); echo RV-EXIT=\$?"
wait_for 120 screen_has up "won"
# The shell on the node: type until it answers (keys typed before srun's PTY opens wait in rv).
# shellcheck disable=SC2016  # expanded by the shell in the allocation
probe='echo UP-IN-$((6*7)) job=$SLURM_JOB_ID rid=$RV_REQUEST_ID pwd=$PWD tty=$(tty | cut -c1-8)'
type_line up "$probe"
wait_for 60 screen_has up "UP-IN-42"
rec=$(newest_record)
[[ -n $rec ]] || it_fail "no request record after rv up" "$(screen up)"
winner=$(jq -r '.winner as $w | .jobs[] | select(.strategy_id == $w) | .job_id' "$rec")
assert_eq "$winner" "$(field up UP-IN-42 job)" "the shell runs inside the winning allocation"
assert_eq "$(jq -r .id "$rec")" "$(field up UP-IN-42 rid)" "with the job's environment (RV_REQUEST_ID)"
assert_eq "$(jq -r .workdir "$rec")" "$(field up UP-IN-42 pwd)" "in the snapshot's directory of the project"
assert_match "$(field up UP-IN-42 pwd)" "/snapshots/.+/src$" "the snapshot's src/, where rv up was started"
assert_eq "/dev/pts" "$(field up UP-IN-42 tty)" "on a pseudo-terminal"
assert_eq "RUNNING" "$(squeue -h -j "$winner" -o %T)" "the allocation is held while the shell runs"
type_line up "exit"
wait_for 60 rv_ended up
assert_eq "0" "$(rv_exit up)" "rv up exits 0 when the shell exits 0 ($(screen up | tail -n 25))"
assert_not_contains "$(screen up)" "the command is empty" "no refusal of the empty command"
wait_for 30 bash -c "[[ -z \$(squeue -h -t PD,R,CG -j '$winner' 2>/dev/null) ]]"
assert_eq "done" "$(jq -r .state "$rec")" "the request is recorded done"
pass "rv up on a terminal: a shell in the allocation, snapshot dir and job env; exit -> rv exits 0, allocation released"

# ---- rv ssh REQUEST with no command: a shell on the job's node ----
run ssh_rv --json run -g 1 -t a6000 --time 5m --name "$NAME-ssh" -- sleep 300
assert_rc 0 "a request to reach with rv ssh"
rid=$(jq -r .id "$IT_DIR/out")
# shellcheck disable=SC2317  # called through wait_for
running() { [[ $(squeue -h -n "$1" -t R -o %i | wc -l) -ge 1 ]]; }
wait_for 60 running "$NAME-ssh"
job=$(squeue -h -n "$NAME-ssh" -t R -o %i)
tm new-window -t up -n ssh "bash --norc --noprofile"
type_line ssh "$(rv_line ssh "$rid"); echo RV-EXIT=\$?"
# shellcheck disable=SC2016
type_line ssh 'echo SSH-IN-$((6*7)) job=$SLURM_JOB_ID node=$SLURMD_NODENAME tty=$(tty | cut -c1-8)'
wait_for 60 screen_has ssh "SSH-IN-42"
assert_eq "$job" "$(field ssh SSH-IN-42 job)" "the shell is inside the request's allocation"
assert_eq "a6000-1" "$(field ssh SSH-IN-42 node)" "on the job's node"
assert_eq "/dev/pts" "$(field ssh SSH-IN-42 tty)" "on a pseudo-terminal"
type_line ssh "exit 4"
wait_for 30 rv_ended ssh
assert_eq "4" "$(rv_exit ssh)" "the shell's exit status comes back"
assert_eq "RUNNING" "$(squeue -h -j "$job" -o %T)" "leaving the shell leaves the job running"
ssh_rv stop "$rid" >/dev/null
pass "rv ssh REQUEST on a terminal: a shell on the job's node; its exit status comes back"

# ---- Ctrl-C while rv up waits: every v100 GPU is taken, so its one strategy pends ----
occupier=$(sbatch --parsable -p gpu-v100 --gres=gpu:v100:4 -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
wait_for_job_state 120 "$occupier" RUNNING
tm new-window -t up -n int "bash --norc --noprofile"
type_line int "$(rv_line up -g 1 -t v100 --time 5m --name "$NAME-int"); echo RV-EXIT=\$?"
# shellcheck disable=SC2317  # called through wait_for
pending() { [[ $(squeue -h -t PD -u rvtest -o '%j' | grep -c "^$NAME-int") -ge 1 ]]; }
wait_for 60 pending
sleep 2 # at least one poll of the race
tm send-keys -t int C-c
wait_for 60 rv_ended int
assert_eq "130" "$(rv_exit int)" "Ctrl-C: rv up exits 130 ($(screen int | tail -n 20))"
assert_eq "" "$(squeue -h -u rvtest -o '%i %j' | awk -v p="$NAME-int" 'index($2, p) == 1')" "nothing of the request is queued"
assert_eq "cancelled" "$(jq -r .state "$(newest_record)")" "the request is recorded cancelled"
pass "Ctrl-C while rv up waits: exit 130, every job of the request cancelled"
