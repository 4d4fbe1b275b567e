#!/usr/bin/env bash
# Task files (#42 item 3, docs/taskfile.md) through the real binary on the real cluster:
#   A. rv.toml with every key (run as a list of words, setup, outputs, gpus, gpu_types, time, nodes,
#      mem, checkpoint, hosts, env secrets and vars): --dry-run's plan, then a run that sees each of
#      them (the GPUs, the vars, only the named secret, the set-up's effect), its outputs pulled.
#   B. the same content again: the set-up is skipped (once per content); a changed file runs it again.
#   C. flags override keys (--gpu, --type, --time, --env for one KEY, --setup), FILE.toml by name.
#   D. each kind of mistake: unknown key (did-you-mean), wrong type, bad duration, missing run,
#      a command after the file, a secret not set; one line with file:line, nothing submitted.
#   E. rv init --task-file writes an example that --dry-run reads; a second one is refused.
#   F. a study from a task file (docs/studies.md): `array` and [sweep] through --dry-run (the tasks
#      in the file's order, the cap, retries), flags over them, a sweep_file beside the task file,
#      the flags' own messages at the key's line; a 3-task array run -f: every task once, exit 0.
# ~100 s.
# testbed-lock: exclusive (submits jobs or changes the cluster)
# test-clusters: 24.11 (nothing in it differs by Slurm version; passed on 22.05 too)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
NAME=rv-it-recipe-$$
MARK=rv-it-recipe-$$.setup # in the testbed user's home: one line per set-up run
cleanup_jobs() {
  local ids
  ids=$(squeue -h -u "$TB_SSH_USER" -o '%i %j' 2>/dev/null | awk -v p="$NAME" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  remote rm -f "$MARK" "$MARK-study" 2>/dev/null || true
}
trap 'cleanup_jobs; it_cleanup' EXIT
# rv with the testbed's ssh config and no --host: the task file's `hosts` says where.
rv_cfg() { "$RV" --ssh-config "$TB_SSH_CONFIG" "$@"; }
submitted_jobs() { squeue -h -u "$TB_SSH_USER" -o '%j' 2>/dev/null | grep -c "^$NAME" || true; }

# Two whole-GPU types of this cluster, each with at least 2 GPUs per node.
mapfile -t types < <(for t in $(it_gpu_types); do (($(it_gpus "$t") >= 2)) && echo "$t"; done)
((${#types[@]} >= 2)) || it_fail "the cluster needs two GPU types with 2+ GPUs per node" "${IT_NODE_TABLE[@]}"
t1=${types[0]} t2=${types[1]}
all_types=$(it_gpu_types | paste -sd' ')
other_type=
for t in $all_types; do [[ $t == "$t1" || $t == "$t2" ]] || other_type=$t; done

printf 'tok-%s\n' "$$" | "$RV" env set IT_TOKEN >/dev/null 2>&1 || it_fail "rv env set IT_TOKEN"
printf 'other-%s\n' "$$" | "$RV" env set IT_OTHER >/dev/null 2>&1 || it_fail "rv env set IT_OTHER"

# ---- the project ----
mkdir proj && cd proj
git init -q . && git config user.email t@e && git config user.name t
cat >job.sh <<'EOF'
echo "gpus=${CUDA_VISIBLE_DEVICES:-none}"
echo "nodes=${SLURM_JOB_NUM_NODES:-?}"
echo "mode=${MODE:-unset} seed=${SEED:-unset} note=${NOTE:-unset}"
echo "token=${IT_TOKEN:-unset} other=${IT_OTHER:-unset}"
echo "setup-made=$(cat "$HOME/$1" 2>/dev/null | wc -l)"
mkdir -p results && echo "result of $SLURM_JOB_ID" >results/metrics.txt
EOF
cat >rv.toml <<EOF
# every key
run = ["bash", "job.sh", "$MARK"]
setup = "echo set-up >>\"\$HOME/$MARK\""
outputs = ["results/"]

[resources]
gpus = 2
gpu_types = ["$t1", "$t2"]
time = "10m"
nodes = 1
mem = "4G"
checkpoint = false
hosts = ["$TB_HOST"]

[env]
secrets = ["IT_TOKEN"]
vars = { MODE = "offline", SEED = 7, NOTE = "two words; \$HOME" }
EOF
git add -A && git commit -qm init

# ---- A. every key ----
run rv_cfg --json run --dry-run --name "$NAME-a"
assert_rc 0 "rv run --dry-run with rv.toml"
got_types=$(jq -r '[.strategies[].gpu_type] | unique | join(" ")' "$IT_DIR/out")
for t in $got_types; do
  [[ $t == "$t1" || $t == "$t2" ]] || it_fail "gpu_types: a strategy of type $t" "$(it_last_run)"
done
assert_eq "1" "$(jq -r '[.strategies[].nodes] | unique | join(" ")' "$IT_DIR/out")" "nodes = 1: single-node strategies"
assert_eq "2" "$(jq -r '[.strategies[] | .nodes * .gpus_per_node] | unique | join(" ")' "$IT_DIR/out")" "gpus = 2"
assert_eq "4096" "$(jq -r '[.strategies[].mem_mb] | unique | join(" ")' "$IT_DIR/out")" "mem = 4G"
assert_eq "600" "$(jq -r '[.strategies[].total_time_s] | unique | join(" ")' "$IT_DIR/out")" "time = 10m"
assert_eq "0" "$(jq -r '[.strategies[] | select(.kind == "checkpoint")] | length' "$IT_DIR/out")" "checkpoint = false"
assert_eq "0" "$(submitted_jobs)" "--dry-run submits nothing"
pass "A. --dry-run: the plan of rv.toml (types $t1/$t2, 1 node, 2 GPUs, 4G, 10m, no checkpoint; hosts reached)"

run rv_cfg run -f --name "$NAME-a"
assert_rc 0 "rv run -f with rv.toml"
assert_match "$RUN_OUT" "gpus=[0-9]+,[0-9]+" "the job has 2 GPUs"
assert_contains "$RUN_OUT" "nodes=1" "one node"
# shellcheck disable=SC2016  # the $HOME is the value's own text
assert_contains "$RUN_OUT" 'mode=offline seed=7 note=two words; $HOME' "[env] vars, byte for byte"
assert_contains "$RUN_OUT" "token=tok-$$ other=unset" "only the secret the file names"
assert_contains "$RUN_OUT" "setup-made=1" "the set-up ran before the command"
assert_contains "$RUN_ERR" "task file rv.toml" "rv says which task file it runs"
rid=$(it_request_id "$IT_DIR/out")
[[ -n $rid ]] || it_fail "no request id" "$(it_last_run)"
rec=$(record_of "$rid")
assert_eq '["IT_TOKEN"]' "$(jq -c .secrets "$rec")" "the record names only that secret"
assert_eq '["results/"]' "$(jq -c .sync.outputs "$rec")" "outputs recorded"
wtype=$(jq -r --arg w "$(jq -r .winner "$rec")" '.jobs[] | select(.strategy_id == $w) | .gpu_type' "$rec")
[[ $wtype == "$t1" || $wtype == "$t2" ]] || it_fail "the winner's type $wtype is not in gpu_types"
pass "A. run -f: 2 GPUs on $wtype, vars, only IT_TOKEN, set-up before the command"

# ---- B. once per content ----
run rv_cfg run -f --name "$NAME-b"
assert_rc 0 "the same content again"
assert_contains "$RUN_OUT" "setup-made=1" "the set-up did not run again"
assert_contains "$RUN_OUT" "rv-setup: done before for this content" "the job says it skipped the set-up"
assert_eq "1" "$(remote cat "$MARK" | wc -l)" "one set-up run for one content"
echo "# changed" >>job.sh
run rv_cfg run -f --name "$NAME-b2"
assert_rc 0 "a changed file"
assert_contains "$RUN_OUT" "setup-made=2" "a changed file runs the set-up again"
pass "B. the set-up runs once per content: skipped for the same files, run again after a change"
# Pulled into the project, the outputs change its content: after B, so as not to run the set-up again.
run rv_cfg sync pull "$rid"
assert_rc 0 "rv sync pull of the task's outputs"
found=$(find . -path '*results/metrics.txt' -newer rv.toml | head -n1)
[[ -n $found ]] || it_fail "outputs: results/metrics.txt was not pulled" "$(it_last_run)" "$(find . -type f | head)"
pass "A. the task's outputs pulled (rv sync pull)"

# ---- C. overrides ----
[[ -n $other_type ]] || other_type=$t1
run rv_cfg --json run --dry-run -g 1 -t "$other_type" --time 5m --name "$NAME-c"
assert_rc 0 "flags over rv.toml"
assert_eq "$other_type" "$(jq -r '[.strategies[].gpu_type] | unique | join(" ")' "$IT_DIR/out")" "--type wins"
assert_eq "1" "$(jq -r '[.strategies[] | .nodes * .gpus_per_node] | unique | join(" ")' "$IT_DIR/out")" "--gpu wins"
assert_eq "300" "$(jq -r '[.strategies[].total_time_s] | unique | join(" ")' "$IT_DIR/out")" "--time wins"
cp rv.toml eval.toml
# One set-up runs, --setup's (its line is the mark's last), not the file's as well:
# the mark has three lines.
run rv_cfg run -f --env SEED=9 --setup "echo flag-setup >>\"\$HOME/$MARK\"" --secret IT_OTHER --name "$NAME-c" \
  eval.toml
assert_rc 0 "FILE.toml by name, with overrides"
assert_contains "$RUN_OUT" "mode=offline seed=9" "--env SEED wins for SEED only"
assert_contains "$RUN_OUT" "token=unset other=other-$$" "--secret wins over [env] secrets"
assert_contains "$RUN_OUT" "setup-made=3" "one set-up ran: --setup's, not the file's too"
assert_eq "flag-setup" "$(remote tail -n 1 "$MARK")" "--setup's line ran"
pass "C. --gpu/--type/--time/--env/--setup/--secret override the file's keys; FILE.toml by name"

# ---- D. mistakes ----
mistake() { # file-content expected-message expected-hint what
  printf '%s\n' "$1" >bad.toml
  run rv_cfg run --name "$NAME-d" bad.toml
  assert_rc 2 "$4: usage error"
  assert_contains "$RUN_ERR" "rv: error: $2" "$4: the message"
  [[ -z $3 ]] || assert_contains "$RUN_ERR" "$3" "$4: the hint"
  assert_eq "1" "$(grep -c 'rv: error:' "$IT_DIR/err")" "$4: one error line"
}
mistake $'run = "x"\n[resources]\ngpu = 2' "bad.toml:3: unknown key 'gpu' in [resources]" "did you mean 'gpus'?" "unknown key"
mistake $'run = "x"\nsetpu = "y"' "bad.toml:2: unknown key 'setpu'" "did you mean 'setup'?" "unknown top key"
mistake $'run = "x"\n[resources]\ngpus = "2"' "bad.toml:3: gpus must be a whole number, not a string" "" "wrong type"
mistake $'run = "x"\n[env]\nvars = ["A=1"]' "bad.toml:3: vars must be a table" "" "wrong type of a table"
mistake $'run = "x"\n[resources]\ntime = "2 weeks"' "bad.toml:3: time '2 weeks'" "1h30m" "bad duration"
mistake $'[resources]\ngpus = 1' "bad.toml:1: no \`run\`" "run = " "missing run"
mistake $'run = "x"\n[resources\ngpus = 1' "bad.toml:2: not valid TOML" "" "TOML syntax"
printf 'run = "x"\n' >bad.toml
run rv_cfg run --name "$NAME-d" bad.toml python x.py
assert_rc 2 "a command after the task file"
assert_contains "$RUN_ERR" "bad.toml is a task file, and a command follows it (python)" "both: the message"
printf 'run = ["bash", "job.sh", "x"]\n[resources]\nhosts = ["%s"]\ntime = "5m"\n[env]\nsecrets = ["IT_NOSUCH"]\n' \
  "$TB_HOST" >bad.toml
run rv_cfg run --name "$NAME-d" bad.toml
assert_rc 2 "a secret that is not set"
assert_contains "$RUN_ERR" "the secret IT_NOSUCH is not set" "missing secret: the message"
assert_contains "$RUN_ERR" "rv env set IT_NOSUCH" "missing secret: the hint"
assert_eq "0" "$(submitted_jobs)" "no mistake submitted anything"
pass "D. unknown key, wrong type, bad duration, missing run, TOML syntax, command and file, missing secret"

# ---- E. rv init --task-file ----
mkdir ../fresh && cd ../fresh && git init -q .
run "$RV" init --task-file
assert_rc 0 "rv init --task-file"
assert_contains "$RUN_OUT" "rv.toml" "it says where"
run rv_cfg --host "$TB_HOST" run --dry-run
assert_rc 0 "the example reads back (no command: rv.toml)"
assert_contains "$RUN_ERR" "task file rv.toml: python train.py" "the example's command"
run "$RV" init --task-file
assert_rc 2 "a second rv init --task-file keeps the file"
assert_contains "$RUN_ERR" "rv init --task-file keeps it" "it says why"
pass "E. rv init --task-file: an example --dry-run reads; never overwritten"

# ---- F. a study from a task file ----
mkdir ../studies && cd ../studies
cat >sweep.toml <<EOF
run = "echo {x} {n}"
array = "%2"
retries = 2
retry_failed = true
[sweep]
x = ["a b", "it's"]
n = [1, 2]
[resources]
gpus = 1
gpu_types = ["$t1"]
time = "2m"
hosts = ["$TB_HOST"]
EOF
run rv_cfg run --dry-run --name "$NAME-f" sweep.toml
assert_rc 0 "rv run --dry-run of a task file with array and [sweep]"
assert_contains "$RUN_OUT" \
  "study: 4 task(s), a task's --time 2m, 3 attempt(s) each (failed tasks too), at most 2 at once" \
  "the study line: 4 tasks, retries = 2, retry_failed, array = %2"
# x is written first, so it varies slowest (as the first --sweep); the values shell-quoted.
shown=$(grep -E '^  \[[0-9]+\] ' "$IT_DIR/out")
assert_eq "  [0] echo 'a b' 1
  [1] echo 'a b' 2
  [2] echo 'it'\''s' 1
  [3] echo 'it'\''s' 2" "$shown" "the tasks, in the file's order"
run rv_cfg --json run --dry-run --name "$NAME-f" --sweep n=5,6,7 --array %3 --retries 0 --no-retry-failed sweep.toml
assert_rc 0 "flags over the study keys"
assert_json '[.study.tasks[].command]' '["echo {x} 5","echo {x} 6","echo {x} 7"]' "--sweep replaces the file's [sweep]"
assert_json '[.study.max_running, .study.retries, .study.retry_failed]' '[3,0,false]' \
  "--array %3, --retries 0 and --no-retry-failed win"
mkdir sub
printf '[{"lr": 0.1, "tag": "a b"}, {"lr": 0.2, "tag": "c"}, {"lr": 0.3, "tag": "d"}]\n' >sub/grid.json
printf 'run = "echo {lr} {tag}"\nsweep_file = "grid.json"\n[resources]\nhosts = ["%s"]\ntime = "2m"\n' "$TB_HOST" \
  >sub/grid.toml
run rv_cfg --json run --dry-run --name "$NAME-f" sub/grid.toml
assert_rc 0 "a sweep_file beside the task file"
assert_json '[.study.tasks[].command]' "[\"echo 0.1 'a b'\",\"echo 0.2 c\",\"echo 0.3 d\"]" \
  "sweep_file is read relative to the task file"
sed 's/grid.json/nogrid.json/' sub/grid.toml >sub/nogrid.toml
run rv_cfg run --dry-run --name "$NAME-f" sub/nogrid.toml
assert_rc 2 "a sweep_file that is not there"
assert_contains "$RUN_ERR" "rv: error: sub/nogrid.toml:2: --sweep-file sub/nogrid.json: No such file or directory" \
  "the missing sweep_file: file, line, the flag's message"
mistake $'run = "x"\narray = "3-1"' "bad.toml:2: --array 3-1: '3-1' ends before it starts" "Slurm's syntax" "bad array"
mistake $'run = "x"\n[sweep]\ntask = [1, 2]' "bad.toml:3: --sweep task=1,2: 'task' is the task id's own placeholder" \
  "name the parameter otherwise" "bad sweep name"
mistake $'run = "x"\nretries = 200' "bad.toml:2: --retries 200: out of range" "0 to 100" "bad retries"
mistake $'run = "x"\narays = "0-3"' "bad.toml:2: unknown key 'arays'" "did you mean 'array'?" "unknown study key"
mistake $'run = "x"\narray = "0-3"\n[sweep]\nn = [1, 2]\n[resources]\nhosts = ["'"$TB_HOST"$'"]\ntime = "2m"' \
  "bad.toml: --array 0-3 with a sweep" "--array %K" "array ids and a sweep"
assert_eq "0" "$(submitted_jobs)" "no dry run and no mistake submitted anything"
pass "F. array and [sweep] from a task file: --dry-run shows the tasks in the file's order; flags win;" \
  "sweep_file beside it; mistakes in the flags' words"

# shellcheck disable=SC2016  # expanded in the job
printf 'run = "echo task {task} of $RV_TASK_COUNT; echo {task} >>$HOME/%s"\narray = "0-2"\n' "$MARK-study" >array.toml
printf '[resources]\ngpus = 1\ngpu_types = ["%s"]\ntime = "2m"\nhosts = ["%s"]\n' "$t1" "$TB_HOST" >>array.toml
run rv_cfg run -f --name "$NAME-f" array.toml
assert_rc 0 "rv run -f of a task file's 3-task array"
for t in 0 1 2; do
  assert_contains "$RUN_OUT" "[$t] task $t of 3" "task $t's output"
done
assert_contains "$RUN_ERR" "3 done, 0 running, 0 pending, 0 failed of 3 task(s)" "the final counts"
assert_eq "0 1 2" "$(remote cat "$MARK-study" | sort -n | paste -sd' ')" "every task ran exactly once"
pass "F. rv run -f array.toml: a 3-task array from a task file, each task once, exit 0"
