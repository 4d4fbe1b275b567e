#!/usr/bin/env bash
# A study followed at a terminal, driven through tmux (a real pseudo-terminal, keys typed, the
# screen read back), on the real cluster through the loopback login node (docs/studies.md):
# - `rv run -f --array 0-2` prints each task's output prefixed and a progress line;
# - Ctrl-C stops following (exit 130, one line saying the study runs on) and leaves a background
#   rv (`rv _settle ID`) that tends the study as the foreground did;
# - every worker killed after that: the background rv finds the lost attempts and adds workers,
#   which run them again (attempt 2): every task once, no worker left, and the background rv ends
#   with the study. Before, Ctrl-C left no background rv, and with no worker alive the tasks
#   waited for workers nobody submitted.
# testbed-lock: exclusive (submits jobs)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

command -v tmux >/dev/null || it_fail "tmux is not installed (scripts/lib.sh installs it)"
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-studypty-$$
IT_TMUX_SOCK=rv-it-studypty-$$
RAN=rv-it-studypty-$$-ran
ID=
cleanup_study_pty() {
  local ids
  tm kill-server 2>/dev/null || true
  [[ -z $ID ]] || pkill -f "_settle $ID" 2>/dev/null || true
  ids=$(squeue -h -u "$TB_SSH_USER" -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  remote "rm -f $RAN $RAN-go" 2>/dev/null || true
}
trap 'cleanup_study_pty; it_cleanup' EXIT

TYPE=$IT_IDLE_TYPE
ps_counts() { ssh_rv ps "$1" 2>/dev/null | sed -n 's/^ *tasks: //p'; }
# shellcheck disable=SC2317  # called through wait_for
all_done() { [[ $(ps_counts "$1") == "$2 done, 0 running, 0 pending, 0 failed"* ]]; }
# shellcheck disable=SC2317
workers_gone() { ! squeue -h -u "$TB_SSH_USER" -o '%k' 2>/dev/null | grep -qx "rv:$1"; }
# shellcheck disable=SC2317
settler_alive() { pgrep -f "_settle $1" >/dev/null; }
# shellcheck disable=SC2317
settler_gone() { ! settler_alive "$1"; }

tm new-session -d -x 220 -y 50 -s st "bash --norc --noprofile"
tm set-option -g history-limit 5000 >/dev/null

# Each task prints a line, then waits for a go file the test makes once the victim's job is gone.
task="echo start {task}; for i in \$(seq 240); do [ -e \$HOME/$RAN-go ] && break; sleep 0.5; done; echo {task} >>\$HOME/$RAN"
type_line st "$(rv_line run -f -g 1 -t "$TYPE" --time 2m --name "$NAME" --array 0-2 -- "$task"); echo RV-EXIT=\$?"
wait_for 120 screen_has st "[1] start 1"
ID=$(screen st | sed -n 's/^study \([0-9a-f]\{8\}\): .*/\1/p' | head -n1)
[[ -n $ID ]] || ID=$(find "$RV_STATE_DIR/requests" -name '*.json' -printf '%f\n' | sed 's/\.json$//' | head -n1)
[[ -n $ID ]] || it_fail "no study id on the screen or in the state directory" "$(screen st)"
# shellcheck disable=SC2317
progress_shown() { screen st | grep -qE "^study $ID: [0-9]+ done, [0-9]+ running, [0-9]+ pending, 0 failed"; }
wait_for 30 progress_shown
pass "rv run -f --array 0-2 at a terminal: task output prefixed, progress line 'study $ID: ... done, ... running'"

# ---- Ctrl-C: rv stops following, exit 130; a background rv takes over ----
tm send-keys -t st C-c
wait_for 30 rv_ended st
assert_eq "130" "$(rv_exit st)" "Ctrl-C: rv run -f exits 130 ($(screen st | tail -n 15))"
assert_contains "$(screen st)" "rv: stopped following study $ID; it runs on (a background rv tops its workers up)" \
  "one line says the study runs on and who tends it"
assert_not_contains "$(screen st)" "rv: error:" "Ctrl-C is the user's choice: no error label"
wait_for 10 settler_alive "$ID"
pass "Ctrl-C: exit 130, the study runs on, a background rv ($(pgrep -f "_settle $ID" | head -n1)) tends it"

# ---- every worker killed after Ctrl-C: only the background rv can add workers ----
# (A worker that is still alive takes a dead worker's task itself, so every one is killed.)
root=$(jq -r .remote_root "$(record_of "$ID")")
claimed() { remote "cat $root/requests/$ID/tasks/1/a1/job 2>/dev/null" | grep -q .; }
wait_for 60 claimed
victims=$(squeue -h -u "$TB_SSH_USER" -o '%i %k' | awk -v c="rv:$ID" '$2 == c { print $1 }' | paste -sd' ')
[[ -n $victims ]] || it_fail "no worker of study $ID in squeue"
# shellcheck disable=SC2086  # one word per job id
scancel $victims
wait_for 60 workers_gone "$ID"
sleep 2 # anything of the victims that outlived them would now append once the go file exists
remote "touch $RAN-go"
wait_for 240 all_done "$ID" 3
assert_eq "0 1 2" "$(remote "cat $RAN" | sort -n | paste -sd' ')" "every task ran exactly once"
assert_eq "lost" "$(remote "cut -d' ' -f1 $root/requests/$ID/tasks/1/a1/exit")" "the killed worker's attempt is recorded lost"
assert_eq "0" "$(remote "cut -d' ' -f1 $root/requests/$ID/tasks/1/a2/exit")" "attempt 2 ran task 1"
wait_for 60 workers_gone "$ID"
wait_for 60 settler_gone "$ID"
assert_eq "done" "$(jq -r .state "$(record_of "$ID")")" \
  "the background rv recorded the study done ($(tail -n 3 "$RV_STATE_DIR/requests/$ID.settle.log" 2>/dev/null))"
pass "every worker ($victims) killed after Ctrl-C: the background rv added workers; every task once, no worker left, the background rv ended"
