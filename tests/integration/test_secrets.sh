#!/usr/bin/env bash
# `rv env` secrets on the real cluster: they reach the job (rv run and rv up --run) byte for byte,
# exist before the job can start (0600), and never appear in argv (rv's trace of every command),
# the batch script, `scontrol show job`, the job's logs or rv's output; the file is gone after.
# ~30 s.
# shellcheck disable=SC2016  # single quotes are the point
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-secrets-$$
occupiers=()
cleanup_jobs() {
  local ids
  ((${#occupiers[@]} == 0)) || scancel "${occupiers[@]}" 2>/dev/null || true
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT
on_login() { remote "$@"; }

secret='tok-'\''sq'\'' "dq" $HOME `id` \n ;|& end'
other='second value with spaces'
want=$(printf '%s|%s' "$secret" "$other" | sha256sum | cut -d' ' -f1)

# ---- the local store ----
printf '%s\n' "$secret" | "$RV" env set HF_TOKEN >"$IT_DIR/set.out" 2>&1 ||
  it_fail "rv env set from stdin" "$(cat "$IT_DIR/set.out")"
printf '# comment\nexport OTHER_KEY="%s"\n' "$other" >"$IT_DIR/.env"
run "$RV" env import
assert_rc 0 "rv env import .env"
assert_contains "$RUN_ERR" "OTHER_KEY" "import names what it imported"
run "$RV" env list
assert_rc 0 "rv env list"
assert_contains "$RUN_OUT" "HF_TOKEN=" "list shows the name"
assert_not_contains "$RUN_OUT" "sq" "list masks the value"
run "$RV" --json env list
assert_json '.HF_TOKEN | (contains("****") and (contains("sq") | not))' 'true' "JSON is masked too"
assert_eq "600" "$(stat -c %a "$XDG_CONFIG_HOME/rv/secrets.json")" "the store is 0600"
run "$RV" env set PATH x
assert_rc 2 "a reserved name is refused"
pass "rv env set (stdin), import, list (masked, JSON too); store 0600; reserved names refused"

# ---- rv run: the job pends (a6000 full) while we look for the secret everywhere ----
occ=$(sbatch --parsable -p gpu-a6000 --gres=gpu:a6000:8 -t 30 -J rv-it-occupy -o /dev/null --wrap 'sleep 1800')
occupiers+=("$occ")
wait_for_job_state 120 "$occ" RUNNING
run ssh_rv -vvv run -g 1 -t a6000 --time 5m --name "$NAME-run" -- 'printf "%s|%s" "$HF_TOKEN" "$OTHER_KEY" | sha256sum'
assert_rc 0 "rv run with secrets"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id" "$(it_last_run)"
trace="$RUN_OUT$RUN_ERR"
job=$(jq -r '.jobs[0].job_id' "$(record_of "$rid")")
file=$(jq -r '.secrets_file' "$(record_of "$rid")")
assert_eq '["HF_TOKEN","OTHER_KEY"]' "$(jq -c .secrets "$(record_of "$rid")")" "the record names the secrets"
assert_not_contains "$(cat "$(record_of "$rid")")" "dq" "the record holds no value"
assert_contains "$trace" "ssh: exec" "the -vvv trace shows every command line rv ran"
assert_not_contains "$trace" '"dq"' "no value in argv or in rv's output"
assert_not_contains "$trace" "$other" "no value in argv or in rv's output (2)"
assert_eq "PENDING" "$(squeue -h -j "$job" -o %T)" "the job pends"
assert_eq "600" "$(on_login stat -c %a "$file")" "the secrets file exists before the job starts, 0600"
assert_eq "700" "$(on_login stat -c %a "$(dirname "$(dirname "$(dirname "$file")")")")" "rv's remote root is 0700"
show=$(scontrol show job -d "$job")
assert_not_contains "$show" "$other" "no value in scontrol show job"
script=$(scontrol write batch_script "$job" - 2>&1)
assert_contains "$script" "$file" "the batch script names the file"
assert_not_contains "$script" "$other" "no value in the batch script"
assert_not_contains "$script" '"dq"' "no value in the batch script (2)"
pass "before the start: file 0600 exists; no value in argv, record, batch script or scontrol"

scancel "$occ"
run ssh_rv logs "$rid" -f
assert_rc 0 "rv logs -f of the secrets job"
assert_contains "$RUN_OUT" "$want" "the job saw both secrets byte for byte (sha256)"
assert_not_contains "$RUN_OUT$RUN_ERR" "$other" "no value in the job's logs"
# shellcheck disable=SC2317  # called through wait_for
file_gone() { ! on_login test -e "$file"; }
wait_for 30 file_gone
pass "the job read the secrets exactly; its file is gone once read"

# ---- rv up --run: the shell on the node reads them too; the file is removed at the end ----
run ssh_rv up -g 1 -t a6000 --time 5m --name "$NAME-up" --run 'printf "%s|%s" "$HF_TOKEN" "$OTHER_KEY" | sha256sum'
assert_rc 0 "rv up --run with secrets"
assert_contains "$RUN_OUT" "$want" "rv up --run saw both secrets byte for byte"
rid=$(it_request_id "$IT_DIR/out")
assert_eq "" "$(jq -r '.secrets_file' "$(record_of "$rid")")" "the record says the secrets file was removed"
on_login test ! -e "$file" || it_fail "rv run's secrets file $file is still on the cluster"
on_login test ! -e "$(dirname "$file")/../$rid/env" || it_fail "rv up's secrets file is still on the cluster"
pass "rv up --run: the shell got the secrets; no secrets file left afterwards"
