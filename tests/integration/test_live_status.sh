#!/usr/bin/env bash
# While rv waits (docs/events.md), on the real cluster: every GPU of one type (IT_FREED_TYPE: a6000,
# h100 on cluster 2) held by another job, so
# `rv run -f` stays PENDING (Resources) until the test frees them. Without a terminal, a plain
# status line naming the reason reaches stderr before the winner and its output, with no control
# sequences, and the job's stdout arrives byte for byte (also through `rv logs -f` on a request
# still pending); `--json` gives events jq parses
# (submitted, a PENDING state with the reason, winner, output, ended with the exit code); on a
# terminal (script(1)) the block is drawn and erased before the job's output.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-live-$$
occupier=
bg_pid=
cleanup_jobs() {
  [[ -z $bg_pid ]] || kill "$bg_pid" 2>/dev/null || true
  [[ -z $occupier ]] || scancel "$occupier" 2>/dev/null || true
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

T=$IT_FREED_TYPE
occupy_type() { occupier=$(it_occupy "$T"); } # every GPU of type T, held until free_type
free_type() {
  scancel "$occupier"
  occupier=
}
# start_waiting OUT ERR RV-ARGS...: rv in the background while type T is full.
start_waiting() {
  local out=$1 err=$2
  shift 2
  occupy_type
  ssh_rv "$@" </dev/null >"$out" 2>"$err" &
  bg_pid=$!
}
# finish_waiting WHAT: frees the GPUs, waits for rv; it must exit 0 (else shows LOG).
finish_waiting() {
  local rc=0
  free_type
  wait "$bg_pid" || rc=$?
  bg_pid=
  [[ $rc == 0 ]] || it_fail "$1 exited $rc" "$(cat -v "$2" | head -40)"
}

# The job's output: a tab, spaces, and a last line without a newline.
job='printf "line one\n\tindented  two\n"; printf "no newline"'
printf 'line one\n\tindented  two\nno newline' >"$IT_DIR/expected"

# ---- no terminal: plain lines on stderr (one per change with -v), the job's bytes on stdout ----
t0=$SECONDS
start_waiting "$IT_DIR/plain.out" "$IT_DIR/plain.err" -v run -f -g 1 -t "$T" --time 5m --name "$NAME-plain" -- "$job"
pending_line() { grep -q 'PENDING: waiting for free GPUs (Resources)' "$IT_DIR/plain.err"; }
wait_for 60 pending_line
waited=$((SECONDS - t0))
finish_waiting "rv run -f" "$IT_DIR/plain.err"
err=$(<"$IT_DIR/plain.err")
status_at=$(grep -n 'PENDING: waiting for free GPUs (Resources)' "$IT_DIR/plain.err" | head -1 | cut -d: -f1)
won_at=$(grep -n ' won: job ' "$IT_DIR/plain.err" | head -1 | cut -d: -f1)
[[ -n $won_at && $status_at -lt $won_at ]] || it_fail "the status line does not come before the winner" "$err"
assert_match "$err" "rv: s[0-9]+ \(job [0-9]+\): PENDING: waiting for free GPUs \(Resources\)" "a plain status line per job"
assert_match "$err" "rv: request [0-9a-f]+: waiting for (its job|the first of [0-9]+ strategies) to start" "the wait is said"
assert_not_contains "$err" $'\e' "no control sequences without a terminal"
# stdout: the submission listing, then the job's bytes exactly (no status there).
# stdout is the job's alone, byte for byte: rv's table of strategies is on stderr (N3).
cmp -s "$IT_DIR/expected" "$IT_DIR/plain.out" ||
  it_fail "the job's stdout is not byte-exact (or rv wrote to it)" "$(od -c "$IT_DIR/plain.out" | head -5)"
pass "no terminal: '$(grep -m1 Resources "$IT_DIR/plain.err")' on stderr within ${waited}s, before the winner; stdout byte-exact"

# ---- rv logs -f on a request still pending: the same plain lines, then the job's bytes ----
occupy_type
run ssh_rv run -g 1 -t "$T" --time 5m --name "$NAME-logs" -- "$job"
assert_rc 0 "rv run without -f"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id on stdout" "$(it_last_run)"
ssh_rv -v logs -f "$rid" </dev/null >"$IT_DIR/logs.out" 2>"$IT_DIR/logs.err" &
bg_pid=$!
logs_pending() { grep -q 'PENDING: waiting for free GPUs (Resources)' "$IT_DIR/logs.err"; }
wait_for 60 logs_pending
finish_waiting "rv logs -f" "$IT_DIR/logs.err"
cmp -s "$IT_DIR/expected" "$IT_DIR/logs.out" ||
  it_fail "rv logs -f: the job's stdout is not byte-exact" "$(od -c "$IT_DIR/logs.out" | head -5)"
pass "rv logs -f on a pending request: '$(grep -m1 Resources "$IT_DIR/logs.err")', then the job's bytes"

# ---- --json: events on stdout, each line JSON ----
start_waiting "$IT_DIR/json.out" "$IT_DIR/json.err" --json run -f -g 1 -t "$T" --time 5m --name "$NAME-json" -- "$job"
# (not jq -e: jq 1.6 takes its exit status from the last input alone)
pending_event() { jq -c 'select(.event == "state" and .reason == "Resources")' "$IT_DIR/json.out" | grep -q .; }
wait_for 60 pending_event
finish_waiting "rv --json run -f" "$IT_DIR/json.out"
jq -c . "$IT_DIR/json.out" >/dev/null || it_fail "stdout is not JSON lines" "$(head -c 2000 "$IT_DIR/json.out")"
while IFS= read -r line; do
  jq -e . <<<"$line" >/dev/null || it_fail "a line that is not one JSON object" "$line"
done <"$IT_DIR/json.out"
kinds=$(jq -r .event "$IT_DIR/json.out" | uniq | paste -sd' ')
assert_match "$kinds" "^submitted state( state)* winner output_started output ended$" "the events in order"
assert_eq "waiting for free GPUs" "$(jq -r 'select(.event == "state" and .reason == "Resources") | .reason_text' \
  "$IT_DIR/json.out" | head -1)" "the reason in plain words"
assert_eq "0" "$(jq -r 'select(.event == "ended") | .exit_code' "$IT_DIR/json.out")" "ended with exit code 0"
jq -j 'select(.event == "output" and .stream == "stdout") | .text' "$IT_DIR/json.out" >"$IT_DIR/json.job"
cmp -s "$IT_DIR/expected" "$IT_DIR/json.job" || it_fail "the output events do not give the job's bytes" \
  "$(od -c "$IT_DIR/json.job" | head -5)"
pass "--json: $kinds; the output events rebuild the job's stdout exactly"

# ---- a terminal: the block is drawn, then erased before the job's output ----
if ! command -v script >/dev/null; then
  pass "SKIP terminal check: script(1) is not installed"
  exit 0
fi
occupy_type
cmd=$(printf '%q ' "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" run -f -g 1 -t "$T" --time 5m --name "$NAME-tty" -- "$job")
TERM=xterm NO_COLOR='' script -q -e -f -c "stty cols 200; $cmd" "$IT_DIR/tty.log" </dev/null >/dev/null 2>&1 &
bg_pid=$!
tty_block() { grep -q 'waiting for its job to start\|waiting for the first of' "$IT_DIR/tty.log"; }
wait_for 60 tty_block
sleep 2 # a few redraws
finish_waiting "rv run -f on a terminal" "$IT_DIR/tty.log"
log=$(<"$IT_DIR/tty.log")
assert_contains "$log" $'\e[J' "the block is erased in place"
assert_contains "$log" $'\e[33mPENDING\e[0m' "colours on a terminal without NO_COLOR"
# After the last erase, nothing of the block: the job's lines are whole.
after=${log##*$'\e[J'}
assert_not_contains "$after" "waiting for" "the block is not drawn again after the output starts"
assert_contains "$after" "line one" "the job's output follows the erased block"
pass "terminal: the block is drawn in colour, redrawn, and erased before the job's output"
