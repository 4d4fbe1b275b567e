#!/usr/bin/env bash
# Smart execution and sync against the real cluster through the loopback sshd: `rv run python
# hello.py` in a temporary git project prints the script's output; an edit runs the new version
# while the first job's snapshot stays as it was; a deleted file disappears remotely; two projects
# with the same folder name do not collide (rsync and SFTP); a requirements.txt naming an offline
# wheel is installed once and reused; --output copies files back and `rv sync pull` fetches them.
# Four short jobs; ~1 minute on an idle cluster.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-sync-$$
# Every remote project dir this test makes, removed at the end.
project_dirs=()
cleanup_sync() {
  local ids
  ids=$(squeue -h -u rvtest -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  ((${#project_dirs[@]} == 0)) || remote rm -rf "${project_dirs[@]}" 2>/dev/null || true
}
trap 'cleanup_sync; it_cleanup' EXIT

git_commit() { git -c user.email=it@rv -c user.name=it commit -qam "$1"; }
# rv run -f with a short, narrow fan-out (the jobs take seconds).
run_job() { run ssh_rv run -f -g 1 --time 5m --max-strategies 2 --name "$NAME-$1" "${@:2}"; }

# ---- a git project: the job prints the script's output; git metadata is recorded ----
mkdir -p "$IT_DIR/a/proj/src"
cd "$IT_DIR/a/proj" || exit 1
git init -q -b main
printf 'import helper\nprint("hello v1", helper.X)\n' >src/hello.py
printf 'X = 42\n' >src/helper.py
printf 'old\n' >src/extra.py
printf 'ignored.txt\n' >.gitignore
printf 'secret.txt\n' >.rvignore
printf 'not sent\n' >ignored.txt
printf 'not sent either\n' >secret.txt
git add -A && git_commit init
printf 'untracked but sent\n' >src/untracked.txt
cd src || exit 1 # run from a subdirectory: the job runs from the same one
run_job v1 python3 hello.py
assert_rc 0 "rv run -f python3 hello.py"
assert_eq "hello v1 42" "$(<"$IT_DIR/out")" "the job ran hello.py from the snapshot (and imported its neighbour)"
assert_contains "$RUN_ERR" "smart execution: python3 names hello.py" "rv says why it syncs"
assert_match "$RUN_ERR" "sync: sent 5 of 5 files" "rv reports the files sent"
rid1=$(it_request_id "$IT_DIR/out")
rec1=$(record_of "$rid1")
snap1=$(jq -r .sync.snapshot "$rec1")
ws=$(jq -r .sync.workspace "$rec1")
project_dirs+=("${ws%/main/code}")
assert_eq "main" "$(jq -r .sync.git.branch "$rec1")" "the record has the branch"
assert_eq "$(git rev-parse --short HEAD)" "$(jq -r .sync.git.commit "$rec1")" "the record has the commit"
assert_eq "true" "$(jq -r .sync.git.dirty "$rec1")" "an untracked file makes the tree dirty"
assert_eq "$snap1/src" "$(jq -r .workdir "$rec1")" "the job ran in the snapshot's src/"
listing=$(remote "cd '$ws' && find . -type f ! -name .rv-workspace | sort")
assert_eq "$(printf '%s\n' ./.gitignore ./src/extra.py ./src/hello.py ./src/helper.py ./src/untracked.txt)" "$listing" \
  "git-tracked plus untracked-not-ignored files, minus .rvignore, are in the workspace"
run ssh_rv ps -a
assert_contains "$RUN_OUT" "[main@$(git rev-parse --short HEAD)*]" "rv ps shows branch@commit, * for dirty"
pass "rv run python3 hello.py: synced 5 files, the job printed 'hello v1 42'; git metadata recorded and in rv ps"

# ---- an edit and a deletion: the dry run shows the plan, the second job runs the new version ----
printf 'import helper, os\nos.makedirs("results", exist_ok=True)\nopen("results/out.txt", "w").write("result v2\\n")\nprint("hello v2", helper.X)\n' >hello.py
rm extra.py # deleted but not `git rm`ed: the original's rsync failed with exit 23 here
run ssh_rv sync push --dry-run
assert_rc 0 "rv sync push --dry-run"
assert_contains "$RUN_OUT" "send    src/hello.py" "the dry run lists the edited file"
assert_contains "$RUN_OUT" "delete  src/extra.py" "the dry run lists the deleted file"
assert_eq "old" "$(remote cat "$ws/src/extra.py")" "a dry run changes nothing"
run_job v2 -o results python3 hello.py
assert_rc 0 "second run after the edit"
assert_eq "hello v2 42" "$(<"$IT_DIR/out")" "the second job ran the new version"
assert_match "$RUN_ERR" "sync: sent 1 of 4 files " "only the changed file moved (the deleted one: checked in the workspace below)"
rid2=$(it_request_id "$IT_DIR/out")
snap2=$(jq -r .sync.snapshot "$(record_of "$rid2")")
assert_contains "$(remote cat "$snap1/src/hello.py")" 'print("hello v1", helper.X)' "the first job's snapshot is unchanged"
assert_eq "old" "$(remote cat "$snap1/src/extra.py")" "the first snapshot keeps the file deleted later"
remote test ! -e "$ws/src/extra.py" || it_fail "the deleted file is still in the workspace"
remote test ! -e "$snap2/src/extra.py" || it_fail "the deleted file is in the second snapshot"
pass "after an edit the second job ran v2; the first snapshot still holds v1; the deleted file is gone remotely"

# ---- the snapshot leads the submission's batch (#38 item 7): one that fails submits nothing ----
snaps_a=$(dirname "$snap2")
remote chmod 500 "$snaps_a"
run ssh_rv run -g 1 --time 5m --name "$NAME-nosnap" python3 hello.py
remote chmod 700 "$snaps_a"
[[ $RUN_RC != 0 ]] || it_fail "a failed snapshot still submitted" "$(it_last_run)"
assert_eq "1" "$(grep -c 'cannot snapshot ' <<<"$RUN_ERR")" "one line says the snapshot failed"
assert_match "$RUN_ERR" "error: cannot snapshot $ws on ssh [^ ]*: rsync: .*Permission denied" "it names the workspace and why"
[[ -z $(it_request_id "$IT_DIR/out") ]] || it_fail "a request was submitted without its snapshot" "$(it_last_run)"
[[ -z $(squeue -h -u rvtest -n "$NAME-nosnap" -o %i) ]] || it_fail "a job was queued without its snapshot"
run ssh_rv ps -a --json
assert_not_contains "$RUN_OUT" "$NAME-nosnap" "no record is left of the request that never reached the queue"
pass "a snapshot that fails at the head of the submission's batch: no sbatch ran, one line says why, no record left"

# ---- --output: copied to the job's output dir after the job; rv sync pull fetches it ----
run ssh_rv logs --err "$rid2" # rv's own lines from the job show with -v or here, not by default
assert_contains "$RUN_OUT" "copied results to" "the job script copied --output"
run ssh_rv sync pull "$rid2" "$IT_DIR/pulled"
assert_rc 0 "rv sync pull REQUEST"
out_file=$(find "$IT_DIR/pulled" -name out.txt)
[[ -n $out_file ]] || it_fail "rv sync pull fetched no out.txt" "$(it_last_run)" "$(find "$IT_DIR/pulled")"
assert_eq "result v2" "$(<"$out_file")" "the pulled output has the job's content"
assert_match "$out_file" "/results/out.txt$" "the output keeps its relative path"
run ssh_rv sync pull /nonexistent/rv-it-path
assert_rc 2 "rv sync pull of a missing remote path"
assert_contains "$RUN_ERR" "does not exist on" "a missing remote path is a one-line error"
pass "--output results: the job copied results/ to its output dir; rv sync pull $rid2 fetched results/out.txt"
# Without LOCAL (N11): into <project>/rv-outputs, which git ignores and the next push does not send.
before_status=$(git status --porcelain)
run ssh_rv sync pull "$rid2"
assert_rc 0 "rv sync pull REQUEST without LOCAL"
[[ -n $(find "$(git rev-parse --show-toplevel)/rv-outputs" -path '*/results/out.txt') ]] ||
  it_fail "no results/out.txt under <project>/rv-outputs" "$(it_last_run)"
assert_eq "$before_status" "$(git status --porcelain)" "the pull leaves git status as it was"
run ssh_rv sync push --dry-run
assert_not_contains "$RUN_OUT" "rv-outputs" "a push never sends what was pulled"
pass "rv sync pull REQUEST: into <project>/rv-outputs, git-ignored, never pushed"

# ---- two projects with the same folder name: two workspaces, over rsync and over SFTP ----
mkdir -p "$IT_DIR/b/proj"
cd "$IT_DIR/b/proj" || exit 1
printf 'print("project b")\n' >b.py
run ssh_rv sync push
assert_rc 0 "rv sync push of the second 'proj'"
ws_b=$(awk '{ print $NF }' <<<"$RUN_OUT")
project_dirs+=("${ws_b%/_default/code}")
[[ $ws_b != "$ws" ]] || it_fail "two projects named proj share the workspace $ws"
assert_match "$ws_b" "/proj-[0-9a-f]{12}/_default/code$" "a non-git project's workspace is <name>-<hash>/_default"
printf 'print("project b v2")\n' >b.py
touch -d '2001-01-01' b.py
run env RV_SYNC_TRANSPORT=sftp "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" sync push
assert_rc 0 "rv sync push over SFTP"
assert_contains "$RUN_OUT" "via sftp" "sync_transport=sftp uses SFTP"
assert_eq 'print("project b v2")' "$(remote cat "$ws_b/b.py")" "SFTP sent the edit"
assert_eq "$(stat -c %Y b.py)" "$(remote stat -c %Y "$ws_b/b.py")" "SFTP kept the mtime (the next push skips it)"
assert_eq "$(printf '%s\n' ./.gitignore ./src/hello.py ./src/helper.py ./src/untracked.txt)" \
  "$(remote "cd '$ws' && find . -type f ! -name .rv-workspace | sort")" "the first project's workspace is untouched"
pass "two projects named 'proj' got two workspaces; SFTP push keeps content and mtime"

# ---- rv sync watch: an edit is pushed (debounced) without asking ----
"$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" sync watch --interval 1s </dev/null >"$IT_DIR/watch.out" 2>"$IT_DIR/watch.err" &
watch_pid=$!
wait_for 20 grep -q watching "$IT_DIR/watch.err"
printf 'print("project b v3")\n' >b.py
# shellcheck disable=SC2317  # called through wait_for
b_is_v3() { [[ $(remote cat "$ws_b/b.py") == 'print("project b v3")' ]]; }
wait_for 20 b_is_v3
kill -INT "$watch_pid"
wait "$watch_pid" || it_fail "rv sync watch did not exit cleanly on SIGINT" "$(cat "$IT_DIR/watch.err")"
pass "rv sync watch pushed an edit on its own and stopped on Ctrl-C"

# ---- dependencies: an offline wheel installed once into the project's venv, then reused ----
mkdir -p "$IT_DIR/c/depsproj/wheels"
cd "$IT_DIR/c/depsproj" || exit 1
python3 - <<'PY'
import zipfile
files = {
    "rvtinypkg/__init__.py": "VALUE = 'tiny-ok'\n",
    "rvtinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: rvtinypkg\nVersion: 0.1\n",
    "rvtinypkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: rv-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
files["rvtinypkg-0.1.dist-info/RECORD"] = "".join(f"{name},,\n" for name in files) + "rvtinypkg-0.1.dist-info/RECORD,,\n"
with zipfile.ZipFile("wheels/rvtinypkg-0.1-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
PY
printf -- '--no-index\n--find-links ./wheels\nrvtinypkg==0.1\n' >requirements.txt
printf 'import rvtinypkg, sys\nprint(rvtinypkg.VALUE, sys.prefix.endswith("/venv"))\n' >app.py
run_job deps1 python3 app.py
assert_rc 0 "first run with requirements.txt"
assert_eq "tiny-ok True" "$(<"$IT_DIR/out")" "the job imported the package from the project's venv"
assert_contains "$RUN_ERR" "rv-deps: installing" "the first run installs"
assert_contains "$RUN_ERR" "deps: installed" "rv reports the install"
venv=$(jq -r .sync.venv "$(record_of "$(it_request_id "$IT_DIR/out")")")
project_dirs+=("${venv%/_default/venv}")
assert_eq "$(sha256sum requirements.txt | cut -d' ' -f1)" "$(remote cat "$venv/.rv-deps-hash")" "the venv records the file's hash"
# Pruning: an old snapshot of a finished request goes, an old one whose job is still queued stays.
snaps=$(dirname "$(jq -r .sync.snapshot "$(record_of "$(it_request_id "$IT_DIR/out")")")")
remote mkdir -p "$snaps/1000000000-0ddba11" "$snaps/1000000000-cafef00d"
holder=$(remote sbatch --parsable -p cpu -J "$NAME-holder" --comment=rv:cafef00d --begin=now+1hour -o /dev/null --wrap true)
run_job deps2 python3 app.py
assert_rc 0 "second run, same requirements.txt"
assert_eq "tiny-ok True" "$(<"$IT_DIR/out")" "the second job uses the same venv"
assert_contains "$RUN_ERR" "up to date, install skipped" "the second run skips the install"
assert_not_contains "$RUN_ERR" "rv-deps: installing" "nothing is installed the second time"
remote test ! -e "$snaps/1000000000-0ddba11" || it_fail "an old snapshot of a finished request was not pruned"
remote test -d "$snaps/1000000000-cafef00d" || it_fail "the snapshot of a queued job was pruned"
assert_contains "$RUN_ERR" "snapshots: pruned 1 " "rv reports the pruning"
# A broken requirement surfaces pip's own error and fails before submitting anything.
printf -- '--no-index\nrv-no-such-package==9\n' >requirements.txt
run ssh_rv run -g 1 --time 5m --name "$NAME-bad" python3 app.py
[[ $RUN_RC != 0 ]] || it_fail "a failing install still submitted" "$(it_last_run)"
assert_contains "$RUN_ERR" "No matching distribution found for rv-no-such-package" "pip's own error is shown"
assert_contains "$RUN_ERR" "installing requirements.txt into" "rv's one-line error names the file"
[[ -z $(it_request_id "$IT_DIR/out") ]] || it_fail "a request was submitted despite the failed install" "$(it_last_run)"
scancel "$holder" 2>/dev/null || remote scancel "$holder"
pass "requirements.txt with an offline wheel: installed once, skipped on the second run; install errors surface"
pass "pruning removed an old snapshot but kept the one whose job (${holder}) is still queued"
