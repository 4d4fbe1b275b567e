# shellcheck shell=bash
# shellcheck disable=SC2034  # RUN_* are for the tests that source this file
# Sourced by every tests/integration/test_*.sh. ctest runs each script with RV (the rv binary) and
# RV_SOURCE_DIR set; exit 0 = pass, 125 = skipped (no testbed here), anything else = fail.
#
# Gives each test: a fresh temp dir as cwd (removed on exit, kept with RV_IT_KEEP=1), an isolated
# rv config, the testbed's variables (TB_SSH_*, from $TB_DIR/env), `run` to capture a command,
# assert_* helpers that say what failed, and wait_for to poll instead of sleeping.
set -euo pipefail

: "${RV:?RV must be the path of the rv binary (ctest sets it)}"
: "${RV_SOURCE_DIR:?RV_SOURCE_DIR must be the source tree (ctest sets it)}"
IT_NAME=$(basename "$0" .sh)
IT_SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
IT_CHECKS=0

it_fail() {
  printf '%s: FAIL: %s\n' "$IT_NAME" "$1" >&2
  shift
  local line
  for line in "$@"; do printf '  %s\n' "$line" >&2; done
  exit 1
}

# --- temp dir and environment -------------------------------------------------------------
IT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rv-it-$IT_NAME.XXXXXX")
it_cleanup() {
  local rc=$?
  cd /
  if [[ -s $IT_DIR/.occupiers ]]; then # it_occupy's jobs
    # shellcheck disable=SC2046  # one word per job id
    scancel $(cat "$IT_DIR/.occupiers") 2>/dev/null || true
  fi
  [[ -z ${RV_TESTBED_LOCK:-} ]] || rm -f "$RV_TESTBED_LOCK.holders/$$"
  if compgen -G "$IT_DIR/run/rv/*.sock" >/dev/null; then
    XDG_RUNTIME_DIR=$IT_DIR/run "$RV" disconnect --all >/dev/null 2>&1 || true
  fi
  if [[ ${RV_IT_KEEP:-0} == 1 ]] || ((rc != 0 && rc != 125)); then
    printf '%s: files kept in %s\n' "$IT_NAME" "$IT_DIR" >&2
  else
    rm -rf "$IT_DIR"
  fi
}
trap it_cleanup EXIT
cd "$IT_DIR"
# rv must not pick up the developer's config or host.
export XDG_CONFIG_HOME=$IT_DIR/config
# ... nor its state: request records and the discovery cache (a warm cache would change the
# round trips a test counts).
export XDG_STATE_HOME=$IT_DIR/state-home
unset RV_HOST RV_CONFIG RV_ACCOUNT
# Held connections (docs/ssh.md): each test's own, in its own directory, ended with the test.
# Off unless the test (or RV_IT_CONNECTION_PERSIST) turns it on: the tests written before it count
# logins and round trips per run.
export XDG_RUNTIME_DIR=$IT_DIR/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
export RV_CONNECTION_PERSIST=${RV_IT_CONNECTION_PERSIST:-0}
export NO_COLOR=1

# --- the testbed ----------------------------------------------------------------------------
# RV_IT_CLUSTER=2 runs the test against the second cluster (Slurm 24.11, testbed/up2.sh): its env
# (TB_HOST=rvtb2, its ssh config), its Slurm commands first on PATH (root-only chroot wrappers in
# $TB_BIN: sbatch, squeue, scancel ... as on the 22.05 cluster) and its own lock. ctest registers
# the chosen tests a second time as integration24.<name> (tests/CMakeLists.txt).
if [[ ${RV_IT_CLUSTER:-1} == 2 ]]; then
  TB_DIR=${TB2_DIR:-/tmp/rv-testbed2}
  RV_TESTBED_LOCK=${RV_TESTBED2_LOCK:-/tmp/rv-testbed2.lock}
  tb_up_cmd="testbed/up.sh --clusters 2"
else
  TB_DIR=${TB_DIR:-/tmp/rv-testbed}
  tb_up_cmd="testbed/up.sh"
fi
# The testbed's own tables (node shapes; tb_ssh_jump_host), read before its env, which wins.
# shellcheck source=testbed/lib.sh
. "$RV_SOURCE_DIR/testbed/lib.sh"
# shellcheck source=testbed/lib2.sh
. "$RV_SOURCE_DIR/testbed/lib2.sh"
if [[ -f $TB_DIR/env ]]; then
  # shellcheck source=/dev/null
  . "$TB_DIR/env"
elif [[ ${CI:-} == true ]]; then
  it_fail "no testbed: $TB_DIR/env is missing (in CI the testbed must run: scripts/test.sh starts it)"
else
  printf '%s: SKIP: no testbed (%s/env missing; start one with %s)\n' "$IT_NAME" "$TB_DIR" "$tb_up_cmd" >&2
  exit 125
fi
TB_HOST=${TB_HOST:-rvtb} # the login node's Host alias in $TB_SSH_CONFIG
# rv, and OpenSSH, through the testbed's login node ($TB_HOST: rvtb, or rvtb2 on cluster 2).
ssh_rv() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
remote() { ssh -F "$TB_SSH_CONFIG" "$TB_HOST" "$@"; }
[[ -z ${TB_BIN:-} ]] || PATH=$TB_BIN:$PATH
TB_SLURM_VERSION=${TB_SLURM_VERSION:-$(sinfo --version | awk '{print $2}')}
# tb_as_user CMD...: CMD as the testbed user where the login node runs it (inside cluster 2's root).
tb_as_user() {
  if [[ -n ${TB_ROOT:-} ]]; then
    chroot "$TB_ROOT" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin /usr/sbin/runuser -u "$TB_SSH_USER" -- "$@"
  else
    runuser -u "$TB_SSH_USER" -- "$@"
  fi
}
printf '%s: cluster %s (Slurm %s), login node %s\n' "$IT_NAME" "${TB_CLUSTER:-?}" "$TB_SLURM_VERSION" "$TB_HOST"

# --- the cluster's shape ----------------------------------------------------------------------
# Roles, not names, for the tests that occupy, break or drain particular nodes (test_gpu,
# test_preflight, test_why, test_status), so that one test runs on either cluster:
#   IT_PAIR_TYPE  a GPU type on two nodes of one partition (2-node jobs; one node broken)
#   IT_SOLO_TYPE  a GPU type on one node (filled with a job to make a queue)
#   IT_IDLE_TYPE  a GPU type the test leaves idle (where another request starts at once)
#   IT_FREED_TYPE a GPU type whose nodes are in one partition only, filled (it_occupy) and then
#                 freed: one strategy starts there (l40s-1 of cluster 2 is in two partitions)
# it_nodes/it_partition/it_gpus TYPE read the testbed's node table (TB_NODES; TB2_NODES).
if [[ ${TB_CLUSTER:-} == "$TB2_CLUSTER" ]]; then
  IT_NODE_TABLE=("${TB2_NODES[@]}") IT_PAIR_TYPE=h100 IT_SOLO_TYPE=l40s IT_IDLE_TYPE=h100 IT_FREED_TYPE=h100
else
  IT_NODE_TABLE=("${TB_NODES[@]}") IT_PAIR_TYPE=a100 IT_SOLO_TYPE=a6000 IT_IDLE_TYPE=h200 IT_FREED_TYPE=a6000
fi
it_node_rows() { printf '%s\n' "${IT_NODE_TABLE[@]}" | awk -F'|' -v t="$1" '$8 == t'; }
it_nodes() { it_node_rows "$1" | cut -d'|' -f1 | paste -sd' '; }          # TYPE -> "node node"
it_partition() { it_node_rows "$1" | head -n 1 | cut -d'|' -f2 | cut -d, -f1; } # TYPE -> its first partition
it_gpus() { it_node_rows "$1" | head -n 1 | cut -d'|' -f9; }              # TYPE -> GPUs per node
it_gpu_name() { tb_gpu_model "$1" | cut -d'|' -f1; }                     # TYPE -> nvidia-smi's name
it_mig_type() { printf '%s\n' "${IT_NODE_TABLE[@]}" | cut -d'|' -f8 | grep -m1 _; } # the MIG-like type
it_cpu_partition() { printf '%s\n' "${IT_NODE_TABLE[@]}" | awk -F'|' '$8 == "" { print $2; exit }'; }
it_gpu_types() { printf '%s\n' "${IT_NODE_TABLE[@]}" | cut -d'|' -f8 | grep -v _ | grep . | sort -u; } # whole GPUs
# it_occupy TYPE [NAME]: a root job (default name rv-it-occupy) holding every GPU of every node of
# TYPE, in its first partition; prints its id once it runs.
it_occupy() {
  local id
  id=$(sbatch --parsable -p "$(it_partition "$1")" -N "$(it_node_rows "$1" | wc -l)" --gres="gpu:$1:$(it_gpus "$1")" \
    -t 30 -J "${2:-rv-it-occupy}" -o /dev/null --wrap 'sleep 1800')
  # Called as $(it_occupy ...), a subshell: the id goes to a file it_cleanup cancels from, so a
  # test that fails before its own scancel leaves no occupier holding the GPUs for the next tests.
  printf '%s\n' "$id" >>"$IT_DIR/.occupiers"
  wait_for_job_state 120 "$id" RUNNING
  printf '%s\n' "$id"
}

# it_need_cluster2: for a script that spans both clusters (`# testbed-span: both`): sets TB2_BIN
# (cluster 2's Slurm commands, for on2) and takes cluster 2's lock too, exclusive. SKIP (exit 125)
# without a second cluster or when its lock stays held; under CI=true both are failures.
it_need_cluster2() {
  TB2_DIR=${TB2_DIR:-/tmp/rv-testbed2}
  if [[ ! -f $TB2_DIR/env ]]; then
    [[ ${CI:-} != true ]] || it_fail "no second cluster: $TB2_DIR/env is missing (testbed/up.sh --clusters 2)"
    printf '%s: SKIP: no second cluster (start it with testbed/up.sh --clusters 2)\n' "$IT_NAME" >&2
    exit 125
  fi
  # shellcheck source=/dev/null disable=SC2153  # TB_BIN comes from cluster 2's env file
  TB2_BIN=$(. "$TB2_DIR/env" && printf '%s' "$TB_BIN")
  RV_TESTBED2_LOCK=${RV_TESTBED2_LOCK:-/tmp/rv-testbed2.lock}
  if ! tb_lock 8 "$RV_TESTBED2_LOCK" exclusive "$IT_NAME"; then
    local why
    why="cluster 2: $(tb_lock_holders "$RV_TESTBED2_LOCK"), after ${RV_TESTBED_LOCK_WAIT:-600} s of waiting: not a failure of rv"
    [[ ${CI:-} == true ]] && it_fail "$why"
    printf '%s: SKIP: %s\n' "$IT_NAME" "$why" >&2
    exit 125
  fi
}

# The cluster's lock (testbed/lib_lock.sh), as the script's `# testbed-lock:` line says: shared for
# a test that submits nothing and changes no cluster state (it runs beside the other readers),
# exclusive for the others (one at a time: most fill partitions and count jobs). Benchmarks take
# the same lock (RV_TESTBED_LOCK). ctest orders its own tests the same way (RESOURCE_GROUPS,
# tests/CMakeLists.txt); this lock is for everyone else on the machine. A wait for it is bounded
# (RV_TESTBED_LOCK_WAIT, 600 s) and names the holder; past the bound the test is skipped (failed
# under CI=true), never killed by ctest's timeout without a word.
RV_TESTBED_LOCK=${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}
IT_LOCK_MODE=$(sed -n 's/^# testbed-lock: *\([a-z]*\).*/\1/p' "$IT_SCRIPT" | head -n 1)
[[ $IT_LOCK_MODE == shared ]] || IT_LOCK_MODE=exclusive
if ! tb_lock 9 "$RV_TESTBED_LOCK" "$IT_LOCK_MODE" "$IT_NAME"; then
  why="$(tb_lock_holders "$RV_TESTBED_LOCK"), after ${RV_TESTBED_LOCK_WAIT:-600} s of waiting: not a failure of rv"
  [[ ${CI:-} == true ]] && it_fail "$why"
  printf '%s: SKIP: %s\n' "$IT_NAME" "$why" >&2
  exit 125
fi

# --- driving a terminal (tmux): what a person types, the screen read back ------------------
# Set IT_TMUX_SOCK (a tmux server of the test's own) before using these; kill it on exit.
tm() { tmux -L "${IT_TMUX_SOCK:?set IT_TMUX_SOCK}" "$@"; }
# The screen of window $1 (joined lines, no trailing blanks).
screen() { tm capture-pane -p -J -S -200 -t "$1" | sed 's/[[:space:]]*$//' | grep -v '^$'; }
# shellcheck disable=SC2317  # called through wait_for
screen_has() { screen "$1" | grep -qF -- "$2"; }
# The exit status the shell in window $1 printed after rv ended (`; echo RV-EXIT=$?`), "" while rv runs.
# shellcheck disable=SC2317  # called through wait_for
rv_exit() { screen "$1" | sed -n 's/^RV-EXIT=\([0-9][0-9]*\)$/\1/p' | tail -n1; }
# shellcheck disable=SC2317
rv_ended() { [[ -n $(rv_exit "$1") ]]; }
# Types a line into window $1, as a person would, and presses Enter.
type_line() { tm send-keys -t "$1" -l -- "$2" && tm send-keys -t "$1" Enter; }
# The rv command line ssh_rv runs, quoted for typing into a shell.
rv_line() { printf '%q ' "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }

# --- running commands ---------------------------------------------------------------------
# run CMD...: runs CMD with stdin from /dev/null; sets RUN_RC, RUN_OUT, RUN_ERR (files $IT_DIR/out,
# $IT_DIR/err, trailing newlines kept in the files, stripped in the variables), RUN_SECS, RUN_CMD.
run() {
  local t0
  RUN_CMD=$(printf '%q ' "$@")
  t0=$(date +%s%N)
  RUN_RC=0
  "$@" </dev/null >"$IT_DIR/out" 2>"$IT_DIR/err" || RUN_RC=$?
  RUN_SECS=$(awk -v ns=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.2f", ns / 1e9 }')
  RUN_OUT=$(<"$IT_DIR/out")
  RUN_ERR=$(<"$IT_DIR/err")
}

# record_of ID: the path of request ID's record in this test's RV_STATE_DIR.
record_of() { printf '%s/requests/%s.json' "$RV_STATE_DIR" "$1"; }

# it_request_id OUT_FILE: the request id rv printed for a run whose stdout went to OUT_FILE: the
# first line of the submitted table ("request ID (NAME): N strategies on HOST"), on stdout for
# `rv run`, on stderr (the file beside it: .out -> .err, out -> err) for `rv run -f` and `rv up`,
# whose stdout is the job's alone (UX review 3, N3). Empty when nothing was submitted.
it_request_id() {
  local out=$1 err=$1
  [[ $out == *out ]] && err=${out%out}err
  sed -n 's/^request \([0-9a-f]\{8\}\) (.*/\1/p' "$out" "$err" 2>/dev/null | head -n1
}

# What the last `run` did, for failure messages.
it_last_run() {
  printf '%s\n' "command: $RUN_CMD" "exit: $RUN_RC after ${RUN_SECS}s" "stdout: $(head -c 2000 "$IT_DIR/out")" \
    "stderr: $(head -c 2000 "$IT_DIR/err")"
}

pass() {
  IT_CHECKS=$((IT_CHECKS + 1))
  printf 'ok %d - %s\n' "$IT_CHECKS" "$*"
}

# --- asserts (each prints what it expected, what it got, and the last command) --------------
assert_eq() { # expected actual what
  [[ $1 == "$2" ]] || it_fail "$3" "expected: $(printf '%q' "$1")" "actual:   $(printf '%q' "$2")"
}
assert_contains() { # haystack needle what
  [[ $1 == *"$2"* ]] || it_fail "$3" "expected to contain: $2" "in: $1"
}
assert_not_contains() { # haystack needle what
  [[ $1 != *"$2"* ]] || it_fail "$3" "expected not to contain: $2" "in: $1"
}
assert_match() { # string ERE what
  [[ $1 =~ $2 ]] || it_fail "$3" "expected to match: $2" "in: $1"
}
assert_rc() { # expected-exit-code what (checks the last run)
  [[ $RUN_RC == "$1" ]] || it_fail "$2: expected exit $1" "$(it_last_run)"
}
assert_faster_than() { # seconds what (checks the last run)
  awk -v a="$RUN_SECS" -v b="$1" 'BEGIN { exit !(a < b) }' || it_fail "$2: took ${RUN_SECS}s, limit $1s" "$(it_last_run)"
}
assert_json() { # jq-filter expected what: applies the filter to the last run's stdout
  local got
  got=$(jq -c "$1" "$IT_DIR/out" 2>&1) || it_fail "$3: stdout is not JSON" "$(it_last_run)"
  [[ $got == "$2" ]] || it_fail "$3: jq '$1'" "expected: $2" "actual:   $got" "$(it_last_run)"
}

# --- polling ----------------------------------------------------------------------------------
# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds; fails the test after SECONDS.
wait_for() {
  local limit=$1 start=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start >= limit)); then
      it_wait_diagnose >&2 || true
      it_fail "timed out after ${limit}s waiting for: $*"
    fi
    sleep 0.2
  done
}
# What the queue held when a wait timed out (a job pending behind another test's leftovers reads
# differently from one rv never submitted); a test that uses a second cluster redefines it.
it_wait_diagnose() {
  echo "the jobs not ended when the wait ended (squeue -a), and the nodes:"
  squeue -a -h -t pending,running,suspended,completing,configuring -o '  %i %u %j %T %r %N' 2>&1 | head -n 40
  sinfo -N -h -o '  %N %T %E' 2>&1 | sort -u | head -n 20
}
# wait_for_job_state SECONDS JOBID STATE: polls squeue (all states) until the job is in STATE.
wait_for_job_state() {
  local job=$2 state=$3
  # shellcheck disable=SC2317  # called through wait_for
  job_in_state() { [[ $(squeue -h -t all -j "$job" -o %T 2>/dev/null) == "$state" ]]; }
  wait_for "$1" job_in_state
}
