#!/usr/bin/env bash
# `--notify` on the real cluster: a local HTTP receiver (python3 http.server on loopback, started
# here) records the POSTs of a real job (rv run -f) and checks each signature with the webhook
# secret; the start and end events arrive, signed, with the state and exit code; the secret, the
# URL and the derived key are in no argv, batch script or scontrol output; Slurm mail is set
# (MailUser/MailType in scontrol). ~20 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

command -v curl >/dev/null || command -v python3 >/dev/null || {
  printf '%s: SKIP: the nodes need curl or python3 to send notifications\n' "$IT_NAME" >&2
  exit 125
}
export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-notify-$$
cleanup_jobs() {
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  [[ -z ${receiver_pid:-} ]] || kill "$receiver_pid" 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT

SECRET="whs-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$IT_DIR/receiver.py" <<'PY'
import hashlib, hmac, http.server, json, os, sys
secret = os.environ["SECRET"].encode()
log = open(sys.argv[1], "a", buffering=1)
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        # docs/notifications.md's verifier: the key from the signed body's request, which the
        # header must name too; the event id in body and header.
        doc = json.loads(body)
        request = doc.get("request_id", "")
        key = hmac.new(secret, request.encode(), hashlib.sha256).digest()
        want = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
        valid = (request == self.headers.get("X-Rv-Request") and len(doc.get("event_id", "")) == 16 and
                 doc.get("event_id") == self.headers.get("X-Rv-Event-Id") and
                 hmac.compare_digest(want, self.headers.get("X-Rv-Signature", "")))
        log.write(json.dumps({"path": self.path, "valid": valid, "event": self.headers.get("X-Rv-Event"),
                              "body": json.loads(body)}) + "\n")
        self.send_response(204 if valid else 401)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
print(server.server_port, flush=True)
server.serve_forever()
PY
SECRET=$SECRET python3 "$IT_DIR/receiver.py" "$IT_DIR/posts.jsonl" >"$IT_DIR/port" 2>"$IT_DIR/receiver.err" &
receiver_pid=$!
wait_for 10 test -s "$IT_DIR/port"
URL="http://127.0.0.1:$(<"$IT_DIR/port")/hook/$NAME"

run ssh_rv run --notify -g 1 -t v100 --time 5m --name "$NAME-noaddr" -- true
assert_rc 2 "--notify without an address is a config error"
assert_contains "$RUN_ERR" "notify_email" "the hint names the keys"
"$RV" config set notify_webhook "$URL" >/dev/null
"$RV" config set notify_email rvtest@localhost >/dev/null
run ssh_rv run --notify -g 1 -t v100 --time 5m --name "$NAME-nosecret" -- true
assert_rc 2 "a webhook without its secret is refused before anything is queued"
assert_contains "$RUN_ERR" "RV_WEBHOOK_SECRET" "the hint names the secret"
printf '%s\n' "$SECRET" | "$RV" env set RV_WEBHOOK_SECRET >/dev/null 2>&1 || it_fail "rv env set RV_WEBHOOK_SECRET"
pass "--notify needs an address, and the webhook its secret (rv env set RV_WEBHOOK_SECRET)"

# ---- a real job: start and end events, signed ----
run ssh_rv -vvv run -f --notify -g 1 -t v100 --time 5m --name "$NAME-run" -- 'echo hello; exit 3'
assert_rc 3 "rv run -f --notify exits with the job's status"
trace="$RUN_OUT$RUN_ERR"
rid=$(jq -r .id "$(find "$RV_STATE_DIR/requests" -name "*.json" | head -n 1)")
job=$(jq -r '[.jobs[] | select(.job_id != "") | .job_id][0]' "$RV_STATE_DIR/requests/$rid.json")
wait_for 20 grep -q '"event": "end"' "$IT_DIR/posts.jsonl"
assert_eq "start end" "$(jq -r .event "$IT_DIR/posts.jsonl" | tr '\n' ' ' | sed 's/ $//')" "a start and an end event" 
assert_eq "true true" "$(jq -r .valid "$IT_DIR/posts.jsonl" | tr '\n' ' ' | sed 's/ $//')" "both signatures check out"
assert_eq "$rid" "$(jq -r 'select(.event == "end") | .body.request_id' "$IT_DIR/posts.jsonl")" "the request id"
assert_eq "$job" "$(jq -r 'select(.event == "end") | .body.job_id' "$IT_DIR/posts.jsonl")" "the job id"
assert_eq "FAILED 3" "$(jq -r 'select(.event == "end") | "\(.body.state) \(.body.exit_code)"' "$IT_DIR/posts.jsonl")" \
  "the end event has the state and exit code"
assert_eq "RUNNING" "$(jq -r 'select(.event == "start") | .body.state' "$IT_DIR/posts.jsonl")" "the start event"
pass "start and end events of job $job reached the receiver, HMAC-signed, with state FAILED and exit code 3"

# ---- Slurm mail, and no secret anywhere ----
show=$(scontrol show job "$job")
assert_contains "$show" "MailUser=rvtest@localhost" "Slurm mail goes to notify_email"
# One strategy: #SBATCH --mail-type=BEGIN,...; a fan-out's winner turns END,FAIL,REQUEUE on itself.
assert_match "$show" "MailType=(BEGIN,)?END,FAIL,REQUEUE" "for (start,) end, failure and requeue"
script=$(scontrol write batch_script "$job" - 2>&1)
key=$(python3 -c 'import hashlib, hmac, sys; print(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())' "$SECRET" "$rid")
for what in "$SECRET" "$key" "$URL"; do
  assert_not_contains "$script" "$what" "the batch script holds no secret, key or URL"
  assert_not_contains "$show" "$what" "scontrol holds no secret, key or URL"
  assert_not_contains "$trace" "$what" "rv's trace (every argv) holds no secret, key or URL"
done
pass "Slurm mail set (MailUser, MailType); secret, derived key and URL in no script, scontrol or argv"

# ---- a wrong secret is caught by the receiver ----
printf 'other\n' | "$RV" env set RV_WEBHOOK_SECRET >/dev/null 2>&1
run ssh_rv run -f --notify -g 1 -t v100 --time 5m --name "$NAME-bad" -- true
assert_rc 0 "a job whose webhook is refused still succeeds"
wait_for 20 bash -c "[[ \$(grep -c . '$IT_DIR/posts.jsonl') -ge 4 ]]"
assert_eq "false false" "$(tail -n 2 "$IT_DIR/posts.jsonl" | jq -r .valid | tr '\n' ' ' | sed 's/ $//')" \
  "signatures made with another secret fail"
pass "the receiver rejects events signed with another secret (the job still ends 0)"
