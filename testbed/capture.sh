#!/usr/bin/env bash
# Capture real Slurm outputs from the running testbed as parser test data:
# tests/data/slurm/<version>/<command>.<scenario>.txt plus a README.md that says how each was made.
# Scenarios: idle cluster; busy (gpu-a100 full, jobs pending behind it); finished jobs in every
# end state. Jobs are submitted as the testbed user (like rv over ssh) and cancelled at the end.
# Takes ~2 min (a TIMEOUT job needs its 1-minute limit plus slurmctld's ~30 s check timer).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
[[ -f $TB_DIR/env ]] || tb_die "no testbed: run testbed/up.sh first"
all_idle() { [[ $(sinfo -h -N -o %t | sort -u) == idle ]]; }
tb_wait 30 all_idle || tb_die "capture needs an idle cluster (cancel running jobs first): $(sinfo -N)"

version=$(sinfo -V | awk '{print $2}')  # 22.05.8
out=${1:-$here/../tests/data/slurm/${version%.*}}
mkdir -p "$out"
rm -f "$out"/*.txt
readme=$out/README.md
as_user() { runuser -u "$TB_SSH_USER" -- bash -c 'cd && "$@"' bash "$@"; }
index=()

# capture FILE STREAM CMD...: runs CMD, keeps STREAM (stdout|stderr|both), records the command.
capture() {
  local file=$1 stream=$2 rc=0
  shift 2
  case $stream in
    stdout) "$@" >"$out/$file" 2>/dev/null || rc=$? ;;
    stderr) "$@" 2>"$out/$file" >/dev/null || rc=$? ;;
    both) "$@" >"$out/$file" 2>&1 || rc=$? ;;
  esac
  local shown=$*
  shown=${shown#as_user }
  index+=("| \`$file\` | \`${shown//|/\\|}\` | $stream | $rc |")
}
submit() { as_user sbatch --parsable "$@" | cut -d';' -f1; }
state_of() { squeue -h -t all -j "$1" -o %T 2>/dev/null; }
in_state() { [[ $(state_of "$1") == "$2" ]]; }
has_start() { squeue -h --start -j "$1" -o %S 2>/dev/null | grep -Eq '^[0-9]{4}-'; }

node_fmt='%N|%P|%T|%c|%m|%G|%f|%C'
queue_fmt='%i|%P|%j|%u|%a|%T|%M|%l|%D|%C|%S|%e|%r|%b|%N'
sacct_fmt=JobID,JobName,Partition,Account,User,State,ExitCode,Elapsed,Timelimit,Start,End,AllocTRES,NodeList

# --- end states first: the TIMEOUT job needs ~90 s, the rest runs meanwhile -----------------
j_timeout=$(submit -p cpu -t 1 -J timeout -o /dev/null --wrap 'sleep 600')
j_completed=$(submit -p cpu -t 5 -J completed -o /dev/null --wrap 'true')
j_failed=$(submit -p cpu -t 5 -J failed -o /dev/null --wrap 'exit 3')
j_cancelled=$(submit -p cpu -t 5 -J cancelled -o /dev/null --wrap 'sleep 600')
tb_wait 20 in_state "$j_cancelled" RUNNING || tb_die "job $j_cancelled did not start"
as_user scancel "$j_cancelled"
tb_wait 20 in_state "$j_completed" COMPLETED || tb_die "job $j_completed did not complete"

# --- idle cluster (the cpu partition has the end-state jobs; the GPU nodes are idle) ---------
capture sinfo_nodes.idle.txt stdout sinfo -N -h -o "$node_fmt"
capture sinfo.idle.txt stdout sinfo
capture scontrol_show_node.idle.txt stdout scontrol show node
capture scontrol_show_partition.txt stdout scontrol show partition
capture scontrol_show_config.txt stdout scontrol show config
capture sbatch_test_only.start_now.txt stderr as_user sbatch --test-only -p gpu-h200 --gres=gpu:h200:2 -c 8 --mem=64G -t 2:00:00 --wrap true
capture scontrol_show_job.completed.txt stdout scontrol show job "$j_completed"

# --- busy: gpu-a100 full, jobs pending behind it ----------------------------------------------
j_fill1=$(submit -p gpu-a100 --gres=gpu:a100:8 -c 16 --mem=128G -t 10 -J fill1 -o /dev/null --wrap 'sleep 600')
j_fill2=$(submit -p gpu-a100 --gres=gpu:a100:8 -c 16 --mem=128G -t 20 -J fill2 -o /dev/null --wrap 'sleep 600')
j_h200=$(submit -p gpu-h200 --gres=gpu:h200:2 -c 24 --mem=200G -t 30 -J h200 -o /dev/null --wrap 'sleep 600')
j_big=$(submit -p gpu-a100 -N 2 --gres=gpu:a100:8 -t 30 -J big -o /dev/null --wrap 'sleep 600')
j_after=$(submit -p gpu-a100 --gres=gpu:a100:4 -t 1:00:00 -J after -o /dev/null --wrap 'sleep 600')
j_tmin=$(submit -p gpu-a100 --gres=gpu:a100:8 -t 1:00:00 --time-min 5 -J tmin -o /dev/null --wrap 'sleep 600')
j_toolong=$(submit -p gpu-a100 --gres=gpu:a100:1 -t 3-00:00:00 -J toolong -o /dev/null --wrap 'sleep 600')
for j in "$j_fill1" "$j_fill2" "$j_h200"; do
  tb_wait 20 in_state "$j" RUNNING || tb_die "job $j did not start: $(squeue)"
done
tb_wait 30 has_start "$j_big" || tb_die "backfill gave job $j_big no start time"
capture sinfo_nodes.busy.txt stdout sinfo -N -h -o "$node_fmt"
capture sinfo.busy.txt stdout sinfo
capture scontrol_show_node.busy.txt stdout scontrol show node
capture squeue.busy.txt stdout squeue
capture squeue_pipe.busy.txt stdout squeue -h -t all -o "$queue_fmt"
capture squeue_start.busy.txt stdout squeue --start
capture squeue_start_pipe.busy.txt stdout squeue -h --start -o '%i|%P|%j|%T|%S|%D|%Y|%r'
capture scontrol_show_job.running.txt stdout scontrol show job "$j_h200"
capture scontrol_show_job.pending.txt stdout scontrol show job "$j_big"
capture sbatch_test_only.later.txt stderr as_user sbatch --test-only -p gpu-a100 --gres=gpu:a100:2 -t 1:00:00 --wrap true
capture sbatch_test_only.alloc_failure.txt stderr as_user sbatch --test-only -p gpu-a100 --gres=gpu:a100:9 -t 10 --wrap true
capture sbatch_test_only.invalid_partition.txt stderr as_user sbatch --test-only -p nosuch -t 10 --wrap true
capture sdiag.busy.txt stdout sdiag

# --- finished jobs in every end state ----------------------------------------------------------
tb_log "waiting for job $j_timeout to hit its 1-minute limit (up to ~90 s)"
tb_wait 150 in_state "$j_timeout" TIMEOUT || tb_die "job $j_timeout never timed out"
all_end() { [[ $(sacct -n -X -P -j "$j_completed,$j_failed,$j_timeout,$j_cancelled" -o State | cut -d' ' -f1 | sort | tr '\n' ' ') == 'CANCELLED COMPLETED FAILED TIMEOUT ' ]]; }
tb_wait 30 all_end || tb_die "sacct does not show the four end states"
capture sacct_states.txt stdout as_user sacct -P -X -j "$j_completed,$j_failed,$j_timeout,$j_cancelled" -o "$sacct_fmt"
capture sacct.txt stdout as_user sacct -X -j "$j_completed,$j_failed,$j_timeout,$j_cancelled"

as_user scancel "$j_fill1" "$j_fill2" "$j_h200" "$j_big" "$j_after" "$j_tmin" "$j_toolong"

{
  cat <<EOF2
# Slurm ${version} outputs captured from the rv testbed

Real outputs of Slurm ${version} (Debian 12's slurm-wlm) on the loopback testbed of \`testbed/up.sh\`
(7 simulated nodes, 6 partitions, fake GPUs; see docs/testbed.md). Made by \`testbed/capture.sh\`
on $(date -u +%Y-%m-%d); re-create with \`bash testbed/up.sh && bash testbed/capture.sh\` (as root,
cluster idle, ~2 min). Job ids and times change on every capture; nothing was edited by hand.

Scenarios (the file name's middle part):
* **idle**: no jobs on the GPU nodes (the cpu node runs/ran the end-state jobs below).
* **busy**: gpu-a100 full (\`fill1\`, \`fill2\`: 8 A100 each, 10 and 20 min), \`h200\` running
  (2 of 4 H200), pending behind them in gpu-a100: \`big\` (2 nodes, Reason=Resources), \`after\`
  and \`tmin\` (\`--time-min 5\`, Reason=Priority), \`toolong\` (3 days > MaxTime 2 days,
  Reason=PartitionTimeLimit). Captured once backfill (bf_interval=2) had given \`big\` a start time.
* **states**: jobs that ended COMPLETED (\`true\`), FAILED (\`exit 3\`), TIMEOUT (\`-t 1\`, sleep),
  CANCELLED (scancel while running).

Jobs ran as user \`${TB_SSH_USER}\` (account \`${TB_ACCOUNT}\`), as through rv's ssh login node.
\`sbatch --test-only\` writes its answer to **stderr** (stdout is empty); the exit code is below.

| file | command | stream kept | exit code |
| --- | --- | --- | --- |
EOF2
  printf '%s\n' "${index[@]}"
} >"$readme"
tb_log "captured ${#index[@]} outputs into $out"
