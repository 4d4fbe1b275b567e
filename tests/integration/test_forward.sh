#!/usr/bin/env bash
# `rv forward` (#14) carries real HTTP: a job on the local cluster runs `python3 -m http.server`;
# through the loopback login node (direct-tcpip channels) the test fetches a small page and a 3 MB
# file 8 times at once through the forward and compares the bytes; --list shows the background
# forward, --stop ends another one, and when the job is cancelled the forward stops by itself and
# says so. Then the same with rv on the login node (no --host: a plain TCP connection), in the
# foreground. The testbed's nodes all live on 127.0.0.1, so the forward listens on another port
# than the server's. About 20 s (18 s measured).
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-fwd-$$
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cleanup_forward() {
  local ids pid
  for pid in $(jq -r '.pid' "$RV_STATE_DIR"/forwards/*.json 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  [[ -z ${fg:-} ]] || kill "$fg" 2>/dev/null || true # the login-node part's foreground forward
  ids=$(squeue -h -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_forward; it_cleanup' EXIT

# The job: a directory with a page and a 3 MB file (and its sha256), served on $1.
server_cmd() {
  printf '%s' "d=\$(mktemp -d) && cd \"\$d\" && printf 'rv forward page %s' \"\$SLURM_JOB_ID\" > page.txt &&
head -c 3000000 /dev/urandom > big.bin && sha256sum big.bin | cut -d' ' -f1 > big.sha &&
exec python3 -m http.server $1 --bind 127.0.0.1"
}
# fetch URL: the body, via python (no proxy).
fetch() { python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=20).read())' "$1"; }
# Checks 8 concurrent fetches of the big file and the page through local port $1 for job $2.
check_concurrent() {
  local lport=$1 job=$2 sha i
  local -a pids=()
  mkdir -p "$IT_DIR/got"
  sha=$(fetch "http://127.0.0.1:$lport/big.sha") || it_fail "fetching big.sha through the forward failed"
  for i in 1 2 3 4 5 6 7 8; do
    fetch "http://127.0.0.1:$lport/big.bin" >"$IT_DIR/got/big.$i" &
    pids+=($!)
  done
  # Wait for these fetches only: a bare `wait` also waits for every other child of this shell,
  # such as a foreground `rv forward` started with & (which runs until its job ends).
  for i in 1 2 3 4 5 6 7 8; do
    wait "${pids[i - 1]}" || it_fail "concurrent fetch $i of big.bin failed"
  done
  for i in 1 2 3 4 5 6 7 8; do
    [[ $(sha256sum <"$IT_DIR/got/big.$i" | cut -d' ' -f1) == "$sha" ]] ||
      it_fail "concurrent fetch $i of big.bin came back different ($(stat -c %s "$IT_DIR/got/big.$i") bytes)"
  done
  [[ $(fetch "http://127.0.0.1:$lport/page.txt") == "rv forward page $job" ]] || it_fail "page.txt differs"
}

# ---- through the login node (SSH, direct-tcpip) ----
PORT=$(free_port)
run ssh_rv --json run -g 1 -t a6000 --time 30m --name "$NAME" -- "$(server_cmd "$PORT")"
assert_rc 0 "rv run submits the server job"
req=$(jq -r .id "$IT_DIR/out")
wait_for 60 curl -sf "http://127.0.0.1:$PORT/page.txt"
job=$(squeue -h -n "$NAME" -t R -o %i | head -1)
[[ -n $job ]] || it_fail "the server job is not running" "$(squeue)"

run ssh_rv forward "$PORT" "$req" --local-port "$PORT" # the server holds it on this one-host testbed
assert_rc 2 "a local port in use is refused"
assert_contains "$RUN_ERR" "rv: error: cannot listen on 127.0.0.1:$PORT: Address already in use" "it names the port"
assert_contains "$RUN_ERR" "rv: hint: choose another one with --local-port" "and the way out"

LPORT=$(free_port)
run ssh_rv forward "$PORT" "$req" --local-port "$LPORT"
assert_rc 0 "rv forward starts"
assert_contains "$RUN_OUT" "forwarding 127.0.0.1:$LPORT -> a6000-1:$PORT (request $req, job $job)" "it says what it forwards"
assert_contains "$RUN_OUT" "rv forward --stop $LPORT ends it" "and how to stop it"
assert_faster_than 10 "rv forward returns once the background forward listens"
check_concurrent "$LPORT" "$job"
pass "8 concurrent fetches of 3 MB and a page through direct-tcpip channels arrive intact"

run ssh_rv --json forward --list
assert_json ".[] | select(.local_port == $LPORT) | .job_id" "\"$job\"" "--list shows the forward"
assert_json ".[] | select(.local_port == $LPORT) | .node" '"a6000-1"' "with its node"
fpid=$(jq -r ".[] | select(.local_port == $LPORT) | .pid" "$IT_DIR/out")
kill -0 "$fpid" || it_fail "the forward's pid $fpid is not alive"
grep -q "connection 9: closed" "$RV_STATE_DIR/forwards/port-$LPORT.log" ||
  it_fail "the log does not show 9 connections closed" "$(cat "$RV_STATE_DIR/forwards/port-$LPORT.log")"

# --stop ends a forward by its local port
L2=$(free_port)
run ssh_rv forward "$PORT" --local-port "$L2" # the newest running request by default
assert_rc 0 "a second forward, to the newest running request"
pid2=$(jq -r .pid "$RV_STATE_DIR/forwards/port-$L2.json")
[[ $(fetch "http://127.0.0.1:$L2/page.txt") == "rv forward page $job" ]] || it_fail "the second forward does not carry"
run ssh_rv forward --stop "$L2"
assert_rc 0 "--stop"
assert_contains "$RUN_OUT" "stopped forward 127.0.0.1:$L2 -> a6000-1:$PORT" "it says which"
kill -0 "$pid2" 2>/dev/null && it_fail "the stopped forward (pid $pid2) still runs"
run ssh_rv forward --stop "$L2"
assert_rc 2 "stopping it again"
assert_contains "$RUN_ERR" "no forward listens on local port $L2" "says there is none"
pass "--list shows a forward, --stop ends one and says so"

# the job ends: the forward stops by itself
scancel "$job"
wait_for 30 bash -c "! kill -0 $fpid"
assert_contains "$(cat "$RV_STATE_DIR/forwards/port-$LPORT.log")" \
  "rv: forward to a6000-1:$PORT stopped: job $job of request $req ended (CANCELLED)" "the log says why it stopped"
run ssh_rv --json forward --list
assert_json 'length' '0' "no forward is left"
run ssh_rv forward "$PORT" "$req"
assert_rc 2 "a forward to an ended request is refused"
assert_contains "$RUN_ERR" "rv: error: request $req has no running job" "with why"
pass "the forward stops when the job ends, and says so"

# ---- rv on the login node: a plain TCP connection, in the foreground ----
if ! command -v sbatch >/dev/null; then
  printf '%s: SKIP the login-node part: no Slurm commands here\n' "$IT_NAME" >&2
  exit 0
fi
PORT=$(free_port)
run "$RV" --json run -g 1 -t a6000 --time 30m --name "$NAME-local" -- "$(server_cmd "$PORT")"
assert_rc 0 "rv run (login node) submits the server job"
lreq=$(jq -r .id "$IT_DIR/out")
wait_for 60 curl -sf "http://127.0.0.1:$PORT/page.txt"
ljob=$(squeue -h -n "$NAME-local" -t R -o %i | head -1)
LPORT=$(free_port)
"$RV" forward "$PORT" "$lreq" --local-port "$LPORT" --foreground >"$IT_DIR/fg.out" 2>"$IT_DIR/fg.err" &
fg=$!
wait_for 20 curl -sf "http://127.0.0.1:$LPORT/page.txt"
check_concurrent "$LPORT" "$ljob"
scancel "$ljob"
# It checks the job every 5 s; bounded, so a forward that does not stop fails here, not at ctest's timeout.
wait_for 30 bash -c "! kill -0 $fg"
rc=0
wait "$fg" || rc=$?
[[ $rc == 0 ]] || it_fail "the foreground forward exited $rc" "$(cat "$IT_DIR/fg.err")"
assert_contains "$(cat "$IT_DIR/fg.out")" "forwarding 127.0.0.1:$LPORT -> a6000-1:$PORT (request $lreq, job $ljob)" "it said what"
assert_contains "$(cat "$IT_DIR/fg.err")" "stopped: job $ljob of request $lreq ended (CANCELLED)" "and why it ended"
pass "on the login node: plain TCP, foreground, ends with the job"
