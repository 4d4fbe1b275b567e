#!/usr/bin/env bash
# Fault-injection campaign on the real local cluster (issue #15, docs/reliability.md "Fault injection").
#
#   tests/fault/campaign.sh [--cluster 1|2] [--runs N] [--seed S] [--only RUN[,RUN...]] [--kinds K,K...] [--study] [--keep]
#
# --cluster 2 runs it against the testbed's second cluster (Slurm 24.11 in a Debian 13 root,
# testbed/up2.sh): its env, lock, login node (rvtb2) and client commands; its slurmctld is stopped
# by its pidfile and started again inside the root, the tmpfs of fs_full is mounted in the root's
# home, and the markers live under its $TB_DIR (the jobs' /tmp is the root's own).
#
# Each run starts `rv run -f` (a synced script) or `rv up --run` (an inline command) and injects
# exactly one fault at a random moment of a random phase (sync/plan, submit, race, follow):
#   sigkill, sigint    rv killed (SIGINT goes to rv's process group, as a terminal's Ctrl-C does)
#   ctld_restart       slurmctld stopped, down for 1-6 s, started again
#   sshd_cut           the login node's sshd processes serving rv's connections killed
#   node_down          the node running the job set DOWN (Slurm requeues or fails it), then resumed
#   fs_full            rv's remote root (a 16 MiB tmpfs for that run) filled up, freed 2-8 s later
#   concurrent_ps      a second rv runs `rv ps` twice meanwhile
#   concurrent_stop    a second rv runs `rv stop REQUEST` meanwhile
# Then `rv ps` once, and the invariants (tests/fault/check.py): no job pending or running that
# belongs to no live request; the command ran at most once (it appends to its own marker file);
# no secrets file of an ended request on the cluster; every record readable, and consistent with
# Slurm. The cleanup (`rv stop` of what is still live, then `rv ps`) is checked too: nothing of the
# run left queued, no secrets file left. A summary per fault kind follows; exit 1 on any violation.
#
# --study makes every run a study (docs/studies.md): `rv run -f --array 0-2` whose tasks each append
# one line to their own marker at their end, so a worker killed mid-task that the task's next attempt
# replaces leaves one line, not two. Checked on top: no task's marker has two lines (a task that
# finished twice), and when rv exited 0, every task's marker has one (no task lost).
#
# Each run is decided by (seed, run number) alone: `--seed S --only RUN` replays exactly that run.
# Each run holds the exclusive flock on the cluster's lock (/tmp/rv-testbed.lock, /tmp/rv-testbed2.lock;
# tb_lock: a bounded wait that names the holder) for its own duration only, and puts the
# cluster back as it found it (slurmctld up, nodes resumed, tmpfs unmounted). Needs root.
# Exit 125 (skipped) without a testbed, except in CI. RV = the rv binary (default build/cli/rv).
# shellcheck disable=SC2088,SC2001  # "~/..." is for the login node to resolve
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
RV=${RV:-$SRC/build/cli/rv}
RUNS=100
SEED=$((($(date +%s%N) / 1000) % 1000000))
ONLY=""
ALL_KINDS=(sigkill sigint ctld_restart sshd_cut node_down fs_full concurrent_ps concurrent_stop)
KINDS=("${ALL_KINDS[@]}")
KEEP=0
STUDY=0
CLUSTER=1
while (($#)); do
  case $1 in
    --cluster) CLUSTER=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --kinds) IFS=, read -r -a KINDS <<<"$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --study) STUDY=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) printf 'campaign: unknown argument %s (see --help)\n' "$1" >&2; exit 2 ;;
  esac
done
for k in "${KINDS[@]}"; do
  [[ " ${ALL_KINDS[*]} " == *" $k "* ]] || { printf 'campaign: unknown fault kind %s\n' "$k" >&2; exit 2; }
done

# shellcheck source=testbed/lib.sh
. "$SRC/testbed/lib.sh"
# shellcheck source=testbed/lib2.sh
. "$SRC/testbed/lib2.sh"
case $CLUSTER in
  1) TB_DIR=${TB_DIR:-/tmp/rv-testbed} LOCK=${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock} up_cmd=testbed/up.sh ;;
  2) TB_DIR=$TB2_DIR LOCK=${RV_TESTBED2_LOCK:-/tmp/rv-testbed2.lock} up_cmd="testbed/up.sh --clusters 2" ;;
  *) printf 'campaign: --cluster is 1 or 2, not %s\n' "$CLUSTER" >&2; exit 2 ;;
esac
if [[ ! -f $TB_DIR/env ]]; then
  [[ ${CI:-} == true ]] && { printf 'campaign: FAIL: no testbed (%s/env)\n' "$TB_DIR" >&2; exit 1; }
  printf 'campaign: SKIP: no testbed (%s/env missing; start one with %s)\n' "$TB_DIR" "$up_cmd" >&2
  exit 125
fi
unset TB_ROOT TB_BIN TB_HOST # cluster 2's env sets them, cluster 1's does not
# shellcheck source=/dev/null
. "$TB_DIR/env"
TB_HOST=${TB_HOST:-rvtb}
[[ -z ${TB_BIN:-} ]] || PATH=$TB_BIN:$PATH # cluster 2's client commands (chroot wrappers)
if [[ $(id -u) != 0 ]]; then
  printf 'campaign: %s: needs root (restarts slurmctld, sets nodes down, mounts)\n' "$([[ ${CI:-} == true ]] && echo FAIL || echo SKIP)" >&2
  [[ ${CI:-} == true ]] && exit 1
  exit 125
fi
[[ -x $RV ]] || { printf 'campaign: no rv binary at %s (set RV)\n' "$RV" >&2; exit 1; }
# The login node's home of the user, as a path here (cluster 2: inside its root; check.py reads
# TB_ROOT for the absolute paths of the records).
if [[ -n ${TB_ROOT:-} ]]; then
  RVHOME=$TB_ROOT$(chroot "$TB_ROOT" getent passwd "$TB_SSH_USER" | cut -d: -f6)
else
  RVHOME=$(getent passwd "$TB_SSH_USER" | cut -d: -f6)
fi
CHECK=$SRC/tests/fault/check.py

# --- the campaign's isolated rv: its own config, state, secrets and remote root ---------------
CAMP=fi$SEED$$
# The jobs append to markers in $WORK: on cluster 2 they see the root's own /tmp, and $TB_DIR at
# its path here.
WORK=$(mktemp -d "$([[ -n ${TB_ROOT:-} ]] && echo "$TB_DIR" || echo /tmp)/rv-fi-$SEED.XXXXXX")
chmod 755 "$WORK"
install -d -m 1777 "$WORK/markers"
export XDG_CONFIG_HOME=$WORK/config XDG_STATE_HOME=$WORK/state RV_STATE_DIR=$WORK/state/rv NO_COLOR=1
# rv's held connection (docs/ssh.md) is the campaign's own: its holder serves every run of the
# campaign (as for a user), and sshd_cut cuts it too.
export XDG_RUNTIME_DIR=$WORK/run
install -d -m 700 "$XDG_RUNTIME_DIR"
unset RV_HOST RV_CONFIG RV_ACCOUNT
REMOTE_ROOT="~/.rv-$CAMP" # "~" resolves on the login node
export RV_REMOTE_ROOT=$REMOTE_ROOT
rvx() { "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" "$@"; }
printf 'value-of-%s\n' "$CAMP" | "$RV" env set FI_SECRET >/dev/null 2>&1
# The project `rv run` syncs: the command names fi_job.sh, so every run pushes it.
mkdir -p "$WORK/project"
cat >"$WORK/project/fi_job.sh" <<'EOF'
# fi_job.sh MARKER SECONDS: one line per execution of the user's command.
printf '%s %s secret=%s\n' "${SLURM_JOB_ID:-?}" "$(hostname)" "${FI_SECRET:+yes}" >>"$1"
sleep "$2"
echo "fi-job-done"
EOF
cat >"$WORK/project/fi_task.sh" <<'EOF'
# fi_task.sh MARKER SECONDS: a study's task; one line at its end (a killed attempt writes none).
sleep "$2"
printf '%s %s secret=%s\n' "${SLURM_JOB_ID:-?}" "$(hostname)" "${FI_SECRET:+yes}" >>"$1"
echo "fi-task-done"
EOF

log() { printf '%s\n' "$*"; }
declare -A N_RUNS N_ORPHAN N_DUP N_SECRET N_UNREAD N_INCONS
for k in "${ALL_KINDS[@]}"; do N_RUNS[$k]=0 N_ORPHAN[$k]=0 N_DUP[$k]=0 N_SECRET[$k]=0 N_UNREAD[$k]=0 N_INCONS[$k]=0; done
FAILED_RUNS=()

# --- helpers -----------------------------------------------------------------------------------
# Random numbers come from $RANDOM in this shell only (never in a $(...) subshell), so that a run
# is replayed exactly from its seed.
pick() { R=$((RANDOM % $1)); }                                 # R = 0..N-1
nap() { local ms=$((RANDOM % ($1 + 1))); sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"; } # 0..MS ms
alive() { kill -0 "$1" 2>/dev/null; }
ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
wait_until() { # SECONDS CMD...: polls every 0.05 s; 1 on timeout
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.05
  done
}
record_file() { grep -lsF "\"name\": \"$NAME\"" "$RV_STATE_DIR"/requests/*.json 2>/dev/null | head -1; }
record_state() {
  local f
  f=$(record_file) && [[ -n $f ]] && sed -n 's/^ *"state": *"\([a-z]*\)".*/\1/p' "$f" | head -1
}
record_id() { local f; f=$(record_file) && [[ -n $f ]] && basename "$f" .json; }
state_in() { local s; s=$(record_state) && [[ -n $s && " $* " == *" $s "* ]]; }
has_record() { [[ -n $(record_file) ]]; }
has_child() { pgrep -P "$RV_PID" >/dev/null; }
child_or_record() { has_child || has_record; } # rsync's ssh, else sync is over
squeue_all() { squeue -u "$TB_SSH_USER" -h -o '%i|%j|%T|%k' 2>/dev/null; }

# The phase the run is in, from the record: plan/sync (no record yet), submit, race, follow, after.
phase_now() {
  alive "$RV_PID" || { echo after; return; }
  case $(record_state) in
    "") echo "$PRE" ;;
    submitting) echo submit ;;
    submitted) echo race ;;
    won) echo follow ;;
    *) echo ending ;;
  esac
}
# Waits for the start of PHASE (or rv's exit), then a random part of it.
wait_phase() {
  case $1 in
    sync) wait_until 20 child_or_record || true; nap 400 ;;
    plan) nap 1500 ;;
    submit) wait_until 30 has_record || true; nap 150 ;;
    race) wait_until 40 state_in submitted won "done" failed cancelled || true; nap 1500 ;;
    follow) wait_until 60 state_in won "done" failed cancelled || true; nap 3000 ;;
  esac
}

# The testbed sshd processes serving connections that rv (or its ssh/rsync children, or the
# holder of its held connection: a daemon, no child of rv) opened.
sshd_of_rv() {
  local pids ports p
  pids=$(
    echo "$RV_PID"
    pgrep -P "$RV_PID" || true
    ss -Hxlp 2>/dev/null | grep -F " $XDG_RUNTIME_DIR/rv/" | grep -o 'pid=[0-9]*' | cut -d= -f2
  )
  ports=$(ss -Htnp state established "( dport = :$TB_SSH_PORT )" 2>/dev/null |
    while read -r _ _ local _ users; do
      for p in $pids; do [[ $users == *"pid=$p,"* ]] && echo "${local##*:}"; done
    done)
  for p in $ports; do
    ss -Htnp state established "( sport = :$TB_SSH_PORT and dport = :$p )" 2>/dev/null |
      grep -o 'pid=[0-9]*' | cut -d= -f2
  done | sort -u
}

FS_MNT=""
NODE_DOWN=""
CTLD_STOPPED=0
FILL=""
# Puts the cluster back as this run found it; safe to call twice, and from the EXIT trap.
restore() {
  [[ -z $FILL ]] || { rm -f "$FILL"; FILL=""; }
  if ((CTLD_STOPPED)) || ! ctld_up; then
    # by its pidfile: the other cluster's slurmctld is a slurmctld too (testbed/lib2.sh)
    tb_ctld_alive || tb_ctld_start
    wait_until 60 ctld_up || log "  WARNING: slurmctld is not answering after a restart"
    CTLD_STOPPED=0
  fi
  if [[ -n $NODE_DOWN ]]; then
    scontrol update NodeName="$NODE_DOWN" State=RESUME 2>/dev/null || true
    NODE_DOWN=""
  fi
}
unmount_fs() {
  [[ -n $FS_MNT ]] || return 0
  umount "$FS_MNT" 2>/dev/null || umount -l "$FS_MNT" 2>/dev/null || true
  rmdir "$FS_MNT" 2>/dev/null || true
  FS_MNT=""
}
cleanup_all() {
  local ids
  if [[ -n ${RV_PID:-} ]] && alive "$RV_PID"; then kill -9 "$RV_PID" 2>/dev/null || true; fi
  restore
  ids=$(squeue -u "$TB_SSH_USER" -h -o '%i %j' 2>/dev/null | awk -v p="$CAMP" 'index($2, p) == 1 { print $1 }')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  unmount_fs
  rm -rf "${RVHOME:?}/.rv-$CAMP"
  "$RV" disconnect --all >/dev/null 2>&1 || true
  if ((KEEP)); then log "campaign files kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup_all EXIT
trap "exit 130" INT TERM # the EXIT trap still cleans up

# --- the fault --------------------------------------------------------------------------------
inject() { # KIND PHASE: runs in the foreground while rv runs in the background
  local kind=$1 phase=$2 pid pids node job t
  case $kind in
    sigkill | sigint)
      wait_phase "$phase"
      FAULT_PHASE=$(phase_now)
      if [[ $kind == sigkill ]]; then kill -KILL "$RV_PID" 2>/dev/null || true; else kill -INT -- "-$RV_PID" 2>/dev/null || true; fi
      ;;
    ctld_restart)
      wait_phase "$phase"
      FAULT_PHASE=$(phase_now)
      pid=$(tb_pid_of "$TB_DIR/slurmctld.pid") || pid=""
      CTLD_STOPPED=1
      [[ -z $pid ]] || kill -TERM "$pid" 2>/dev/null || true
      wait_until 30 bash -c "! kill -0 '$pid' 2>/dev/null" || true
      nap 5000
      sleep 1
      restore
      ;;
    sshd_cut)
      wait_phase "$phase"
      FAULT_PHASE=$(phase_now)
      t=$((SECONDS + 3))
      pids=""
      while [[ -z $pids ]] && ((SECONDS < t)) && alive "$RV_PID"; do
        pids=$(sshd_of_rv)
        [[ -n $pids ]] || sleep 0.05
      done
      # shellcheck disable=SC2086  # one word per pid
      if [[ -n $pids ]]; then kill -KILL $pids 2>/dev/null || true; else FAULT_PHASE="$FAULT_PHASE(no-conn)"; fi
      ;;
    node_down)
      # The node of the job that runs the command: its job id is the marker's first word.
      t=$((SECONDS + 60))
      node=""
      while [[ -z $node ]] && ((SECONDS < t)) && alive "$RV_PID"; do
        [[ ! -s $MARKER ]] || node=$(squeue -h -j "$(cut -d' ' -f1 "$MARKER" | head -1)" -t R -o %N 2>/dev/null | head -1)
        [[ -n $node ]] || sleep 0.05
      done
      nap 1500
      FAULT_PHASE=$(phase_now)
      if [[ -n $node ]]; then
        NODE_DOWN=$node
        scontrol update NodeName="$node" State=DOWN Reason=rv-fault-injection 2>/dev/null || true
        nap 4000
        sleep 2
        restore
        # Slurm holds a requeued batch job for ~2 minutes (BeginTime): let it start now instead.
        job=$(cut -d' ' -f1 "$MARKER" | head -1)
        if wait_until 10 bash -c "squeue -h -j $job -o %r 2>/dev/null | grep -q BeginTime"; then
          scontrol update JobId="$job" StartTime=now 2>/dev/null || true
        fi
      else
        FAULT_PHASE="$FAULT_PHASE(no-job)"
      fi
      ;;
    fs_full)
      wait_phase "$phase"
      FAULT_PHASE=$(phase_now)
      FILL=$FS_MNT/.fi-fill
      dd if=/dev/zero of="$FILL" bs=64k 2>/dev/null || true
      nap 6000
      sleep 2
      restore
      ;;
    concurrent_ps)
      wait_phase "$phase"
      FAULT_PHASE=$(phase_now)
      rvx ps -a >"$RUN_DIR/second.out" 2>&1 || true
      nap 2000
      rvx ps >>"$RUN_DIR/second.out" 2>&1 || true
      ;;
    concurrent_stop)
      wait_phase "$phase"
      wait_until 30 has_record || true
      FAULT_PHASE=$(phase_now)
      rvx stop "$(record_id)" >"$RUN_DIR/second.out" 2>&1 || true
      ;;
  esac
}

# --- one run ----------------------------------------------------------------------------------
one_run() { # RUN
  local run=$1 kind mode phase phases rc=0 violations t0 markers ids rid
  RANDOM=$((SEED * 1000 + run)) # every choice of this run depends on (seed, run) only
  kind=${KINDS[$(((run - 1 + SEED) % ${#KINDS[@]}))]}
  pick 2
  mode=$([[ $R == 0 ]] && echo run || echo up)
  ((STUDY == 0)) || mode=study
  PRE=$([[ $mode == up ]] && echo plan || echo sync)
  case $kind in
    node_down) phases=(follow) ;;
    concurrent_stop) phases=(submit race follow) ;;
    *) phases=("$PRE" submit race follow) ;;
  esac
  pick ${#phases[@]}
  phase=${phases[$R]}
  NAME=$CAMP-r$run
  RUN_DIR=$WORK/runs/$run
  mkdir -p "$RUN_DIR"
  pick 4
  local marker=$WORK/markers/$run secs=$((2 + R))
  MARKER=$marker
  FAULT_PHASE=""

  if ! tb_lock 8 "$LOCK" exclusive "campaign run $run"; then
    log "run $run: $(tb_lock_holders "$LOCK"), after ${RV_TESTBED_LOCK_WAIT:-600} s of waiting: not a failure of rv"
    [[ ${CI:-} == true ]] && exit 1
    exit 125
  fi
  t0=$SECONDS # the run's own time, not the wait for the lock (other tests interleave between runs)
  ctld_up || restore
  if [[ $kind == fs_full ]]; then
    FS_MNT=$RVHOME/.rv-$CAMP-fs$run
    mkdir -p "$FS_MNT"
    mount -t tmpfs -o size=16m,mode=700 "rv-fi-$CAMP" "$FS_MNT"
    chown "$TB_SSH_USER:" "$FS_MNT"
    export RV_REMOTE_ROOT="~/.rv-$CAMP-fs$run"
  else
    export RV_REMOTE_ROOT=$REMOTE_ROOT
  fi

  # rv in its own session (setsid): $RV_PID is rv, and its process group gets the SIGINT.
  if [[ $mode == study ]]; then # each task appends to $marker.<task> at its end (fi_task.sh)
    (cd "$WORK/project" && exec setsid "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" run -f -g 1 --time 5m \
      --name "$NAME" --array 0-2 -- bash fi_task.sh "$marker.{task}" "$secs" </dev/null >"$RUN_DIR/rv.out" 2>"$RUN_DIR/rv.err") &
  elif [[ $mode == run ]]; then
    (cd "$WORK/project" && exec setsid "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" run -f -g 1 --time 5m \
      --name "$NAME" -- bash fi_job.sh "$marker" "$secs" </dev/null >"$RUN_DIR/rv.out" 2>"$RUN_DIR/rv.err") &
  else
    (cd "$WORK/project" && exec setsid "$RV" --ssh-config "$TB_SSH_CONFIG" --host "$TB_HOST" up -g 1 --time 5m \
      --name "$NAME" --run "printf '%s %s secret=%s\n' \"\$SLURM_JOB_ID\" \"\$(hostname)\" \"\${FI_SECRET:+yes}\" >>$marker; sleep $secs" \
      </dev/null >"$RUN_DIR/rv.out" 2>"$RUN_DIR/rv.err") &
  fi
  RV_PID=$!
  inject "$kind" "$phase"
  # rv ends by itself (or was killed); a hang is a violation of its own.
  local hung=0
  if ! wait_until 150 bash -c "! kill -0 $RV_PID"; then
    hung=1
    kill -KILL "$RV_PID" 2>/dev/null || true
  fi
  { wait "$RV_PID"; } 2>/dev/null || rc=$? # no "Killed" line from bash
  restore

  # rv ps once, then the invariants.
  squeue_all >"$RUN_DIR/squeue.before"
  rvx ps -a >"$RUN_DIR/ps.out" 2>"$RUN_DIR/ps.err" || echo "rv ps exit $?" >>"$RUN_DIR/ps.err"
  squeue_all >"$RUN_DIR/squeue.after"
  violations=$(python3 "$CHECK" after "$RV_STATE_DIR" "$NAME" "$RUN_DIR/squeue.before" "$RUN_DIR/squeue.after" "$RVHOME")
  ((hung == 0)) || violations+=$'\n'"hung: rv still running 150 s after the fault (killed)"

  # Cleanup through rv: stop what is live, then rv ps; then nothing of the run may be left.
  for rid in $(python3 "$CHECK" live "$RV_STATE_DIR" "$NAME"); do
    rvx stop "$rid" >>"$RUN_DIR/stop.out" 2>&1 || true
  done
  rvx ps >>"$RUN_DIR/stop.out" 2>&1 || true
  wait_until 30 bash -c "[[ -z \$(squeue -u $TB_SSH_USER -h -n $NAME -t PD,R,CG -o %i) ]]" || true
  squeue_all >"$RUN_DIR/squeue.final"
  violations+=$'\n'$(python3 "$CHECK" final "$RV_STATE_DIR" "$NAME" "$RUN_DIR/squeue.final" "$RVHOME")
  markers=0
  [[ ! -f $marker ]] || markers=$(wc -l <"$marker")
  ((markers <= 1)) || violations+=$'\n'"duplicate: the command ran $markers times: $(tr '\n' ';' <"$marker")"
  if [[ $mode == study ]]; then # per task: at most one end; with rv's exit 0, exactly one
    local t n
    markers=0
    for t in 0 1 2; do
      n=0
      [[ ! -f $marker.$t ]] || n=$(wc -l <"$marker.$t")
      markers=$((markers + n))
      ((n <= 1)) || violations+=$'\n'"duplicate: task $t finished $n times: $(tr '\n' ';' <"$marker.$t")"
      ((rc != 0 || n == 1)) || violations+=$'\n'"inconsistent: rv exited 0 but task $t finished $n times (lost)"
    done
  fi
  # rv's own account: "every strategy ended without starting" (exit 3) while the command ran is
  # wrong, unless a concurrent `rv stop` cancelled the running winner.
  # A concurrent `rv ps` must change nothing: the request runs its command once and rv exits 0.
  if [[ $kind == concurrent_ps && $mode != study ]] && ((rc != 0 || markers != 1)); then
    violations+=$'\n'"inconsistent: with a concurrent rv ps, rv exited $rc and the command ran $markers time(s)"
  fi
  if ((rc == 3 && markers > 0)) && [[ $kind != concurrent_stop && $mode != study ]]; then
    violations+=$'\n'"inconsistent: rv exited 3 (no strategy started) but the command ran: $(grep -m1 'rv: error' "$RUN_DIR/rv.err")"
  fi
  # Leave nothing: jobs of the run cancelled, tmpfs unmounted, cluster as found.
  ids=$(squeue -u "$TB_SSH_USER" -h -n "$NAME" -o %i 2>/dev/null | paste -sd' ')
  # shellcheck disable=SC2086  # one word per job id
  [[ -z $ids ]] || scancel $ids 2>/dev/null || true
  restore
  unmount_fs
  tb_unlock 8 "$LOCK"

  violations=$(grep -v '^$' <<<"$violations" || true)
  N_RUNS[$kind]=$((N_RUNS[$kind] + 1))
  local n_o n_d n_s n_u n_i
  n_o=$(grep -c '^orphan' <<<"$violations" || true)
  n_d=$(grep -c '^duplicate' <<<"$violations" || true)
  n_s=$(grep -c '^secret' <<<"$violations" || true)
  n_u=$(grep -c '^unreadable' <<<"$violations" || true)
  n_i=$(grep -c '^inconsistent\|^hung' <<<"$violations" || true)
  N_ORPHAN[$kind]=$((N_ORPHAN[$kind] + n_o))
  N_DUP[$kind]=$((N_DUP[$kind] + n_d))
  N_SECRET[$kind]=$((N_SECRET[$kind] + n_s))
  N_UNREAD[$kind]=$((N_UNREAD[$kind] + n_u))
  N_INCONS[$kind]=$((N_INCONS[$kind] + n_i))
  rid=$(record_id || true)
  printf 'run %3d %-15s %-3s %-8s at %-16s rv exit %-3s marker %d  %3ds  %s %s\n' "$run" "$kind" "$mode" "$phase" \
    "${FAULT_PHASE:-?}" "$rc" "$markers" $((SECONDS - t0)) "${rid:-no-record}" "$([[ -z $violations ]] && echo ok || echo VIOLATION)"
  if [[ -n $violations ]]; then
    FAILED_RUNS+=("$run")
    sed 's/^/      /' <<<"$violations"
    printf '      rv stderr (tail): %s\n' "$(tail -n 3 "$RUN_DIR/rv.err" | tr '\n' '|')"
    printf '      replay: %s --cluster %s --seed %s --only %s\n' "$0" "$CLUSTER" "$SEED" "$run"
    KEEP=1
  fi
}

# --- the campaign -------------------------------------------------------------------------------
if [[ -n $ONLY ]]; then
  IFS=, read -r -a RUN_LIST <<<"$ONLY"
else
  mapfile -t RUN_LIST < <(seq 1 "$RUNS")
fi
log "fault-injection campaign on cluster $TB_CLUSTER (Slurm $(sinfo --version | awk '{print $2}')): seed $SEED, ${#RUN_LIST[@]} run(s), kinds ${KINDS[*]}, rv $RV"
log "replay one run: $0$([[ $CLUSTER == 1 ]] || echo " --cluster $CLUSTER") --seed $SEED --only RUN$([[ ${KINDS[*]} == "${ALL_KINDS[*]}" ]] || echo " --kinds $(IFS=,; echo "${KINDS[*]}")")"
START=$SECONDS
for run in "${RUN_LIST[@]}"; do one_run "$run"; done

log ""
log "seed $SEED: ${#RUN_LIST[@]} run(s) in $((SECONDS - START)) s"
printf '%-16s %5s %8s %11s %15s %11s %16s\n' "fault kind" runs orphans duplicates "leaked secrets" unreadable inconsistencies
tot=(0 0 0 0 0 0)
for k in "${ALL_KINDS[@]}"; do
  ((N_RUNS[$k] > 0)) || continue
  printf '%-16s %5d %8d %11d %15d %11d %16d\n' "$k" "${N_RUNS[$k]}" "${N_ORPHAN[$k]}" "${N_DUP[$k]}" "${N_SECRET[$k]}" \
    "${N_UNREAD[$k]}" "${N_INCONS[$k]}"
  tot=($((tot[0] + N_RUNS[$k])) $((tot[1] + N_ORPHAN[$k])) $((tot[2] + N_DUP[$k])) $((tot[3] + N_SECRET[$k]))
    $((tot[4] + N_UNREAD[$k])) $((tot[5] + N_INCONS[$k])))
done
printf '%-16s %5d %8d %11d %15d %11d %16d\n' total "${tot[@]}"
if ((${#FAILED_RUNS[@]})); then
  log "VIOLATIONS in run(s) ${FAILED_RUNS[*]} (replay: $0 --seed $SEED --only RUN)"
  exit 1
fi
log "no violation"
