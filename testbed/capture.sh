#!/usr/bin/env bash
# Capture real Slurm outputs from the running testbed as parser test data:
# tests/data/slurm/<version>/<command>.<scenario>.txt plus a README.md that says how each was made.
# Scenarios: idle cluster; busy (gpu-a100 full, jobs pending behind it); finished jobs in every
# end state. Jobs are submitted as the testbed user (like rv over ssh) and cancelled at the end.
# Takes ~2 min (a TIMEOUT job needs its 1-minute limit plus slurmctld's ~30 s check timer). Takes
# the cluster's testbed lock, and cancels every job it made on exit (also on error).
# `capture.sh --cluster 2 [DIR]` captures cluster 2 (Slurm 24.11, testbed/up2.sh) into
# tests/data/slurm/24.11/: the same scenarios on its own partitions (P_* below).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/capture_kit.sh
. "$here/capture_kit.sh"
cluster=1
if [[ ${1:-} == --cluster ]]; then
  cluster=$2
  shift 2
fi
# The partitions each scenario uses: P_FULL (filled by two jobs of G_FULL, one per node), P_PART
# (a job of G_PART on part of it), P_CPU (the end-state jobs); T_* are the GPU types.
if [[ $cluster == 2 ]]; then
  # shellcheck source=testbed/lib2.sh
  . "$here/lib2.sh"
  TB_DIR=$TB2_DIR
  PATH=$TB2_DIR/bin:$PATH # the root's Slurm commands (chroot)
  RV_TESTBED_LOCK=${RV_TESTBED2_LOCK:-/tmp/rv-testbed2.lock}
  as_user() { tb2_chroot runuser -u "$TB_SSH_USER" -- bash -c 'cd && "$@"' bash "$@"; }
  P_FULL=hopper T_FULL=h100 N_FULL=4 P_PART=ada T_PART=l40s N_PART=2 C_PART=8 M_PART=64G P_CPU=compute
  # rvtest's QOS allows 8 GPUs at once: the busy scenario's jobs are root's (QOS normal).
  submit_busy() { tracked sbatch --parsable "$@"; }
  busy_note=" The busy jobs are root's: ${TB_SSH_USER}'s QOS ${TB2_QOS} allows 8 GPUs at once."
  shape="${#TB2_NODES[@]} simulated nodes, ${#TB2_PARTITIONS[@]} partitions, fake GPUs, Debian 13's slurm-wlm in a chroot; testbed/up2.sh"
  remake="bash testbed/up.sh --clusters 2 && bash testbed/capture.sh --cluster 2"
else
  as_user() { runuser -u "$TB_SSH_USER" -- bash -c 'cd && "$@"' bash "$@"; }
  P_FULL=gpu-a100 T_FULL=a100 N_FULL=8 P_PART=gpu-h200 T_PART=h200 N_PART=4 C_PART=24 M_PART=200G P_CPU=cpu
  submit_busy() { sbatch_as_user "$@"; }
  busy_note=""
  shape="${#TB_NODES[@]} simulated nodes, 6 partitions, fake GPUs, Debian 12's slurm-wlm; testbed/up.sh"
  remake="bash testbed/up.sh && bash testbed/capture.sh"
fi
capture_kit_lock
all_idle() { [[ $(sinfo -h -N -o %t | sort -u) == idle ]]; }
tb_wait 30 all_idle || tb_die "capture needs an idle cluster (cancel running jobs first): $(sinfo -N)"

capture_kit_out "" "${1:-}" # 22.05.8 -> tests/data/slurm/22.05
readme=$out/README.md
# sbatch_as_user SBATCH-ARGS...: as the testbed user; prints the job id (cancelled on exit).
sbatch_as_user() { tracked as_user sbatch --parsable "$@"; }

node_fmt='%N|%P|%T|%c|%m|%G|%f|%C'
queue_fmt='%i|%P|%j|%u|%a|%T|%M|%l|%D|%C|%S|%e|%r|%b|%N'
sacct_fmt=JobID,JobName,Partition,Account,User,State,ExitCode,Elapsed,Timelimit,Start,End,AllocTRES,NodeList

# --- end states first: the TIMEOUT job needs ~90 s, the rest runs meanwhile -----------------
j_timeout=$(sbatch_as_user -p "$P_CPU" -t 1 -J timeout -o /dev/null --wrap 'sleep 600')
j_completed=$(sbatch_as_user -p "$P_CPU" -t 5 -J completed -o /dev/null --wrap 'true')
j_failed=$(sbatch_as_user -p "$P_CPU" -t 5 -J failed -o /dev/null --wrap 'exit 3')
j_cancelled=$(sbatch_as_user -p "$P_CPU" -t 5 -J cancelled -o /dev/null --wrap 'sleep 600')
tb_wait 20 in_state "$j_cancelled" RUNNING || tb_die "job $j_cancelled did not start"
as_user scancel "$j_cancelled"
tb_wait 20 in_state "$j_completed" COMPLETED || tb_die "job $j_completed did not complete"

# --- idle cluster (the cpu partition has the end-state jobs; the GPU nodes are idle) ---------
capture sinfo_nodes.idle.txt stdout sinfo -N -h -o "$node_fmt"
capture sinfo.idle.txt stdout sinfo
capture scontrol_show_node.idle.txt stdout scontrol show node
capture scontrol_show_partition.txt stdout scontrol show partition
capture scontrol_show_config.txt stdout scontrol show config
capture sbatch_test_only.start_now.txt stderr as_user sbatch --test-only -p "$P_PART" --gres="gpu:$T_PART:1" -c 8 --mem=64G -t 2:00:00 --wrap true
capture scontrol_show_job.completed.txt stdout scontrol show job "$j_completed"

# --- busy: gpu-a100 full, jobs pending behind it ----------------------------------------------
j_fill1=$(submit_busy -p "$P_FULL" --gres="gpu:$T_FULL:$N_FULL" -c 16 --mem=128G -t 10 -J fill1 -o /dev/null --wrap 'sleep 600')
j_fill2=$(submit_busy -p "$P_FULL" --gres="gpu:$T_FULL:$N_FULL" -c 16 --mem=128G -t 20 -J fill2 -o /dev/null --wrap 'sleep 600')
j_h200=$(submit_busy -p "$P_PART" --gres="gpu:$T_PART:$((N_PART / 2))" -c "$C_PART" --mem="$M_PART" -t 30 -J h200 -o /dev/null --wrap 'sleep 600')
j_big=$(submit_busy -p "$P_FULL" -N 2 --gres="gpu:$T_FULL:$N_FULL" -t 30 -J big -o /dev/null --wrap 'sleep 600')
j_after=$(submit_busy -p "$P_FULL" --gres="gpu:$T_FULL:$((N_FULL / 2))" -t 1:00:00 -J after -o /dev/null --wrap 'sleep 600')
j_tmin=$(submit_busy -p "$P_FULL" --gres="gpu:$T_FULL:$N_FULL" -t 1:00:00 --time-min 5 -J tmin -o /dev/null --wrap 'sleep 600')
j_toolong=$(submit_busy -p "$P_FULL" --gres="gpu:$T_FULL:1" -t 3-00:00:00 -J toolong -o /dev/null --wrap 'sleep 600')
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
capture sbatch_test_only.later.txt stderr as_user sbatch --test-only -p "$P_FULL" --gres="gpu:$T_FULL:2" -t 1:00:00 --wrap true
capture sbatch_test_only.alloc_failure.txt stderr as_user sbatch --test-only -p "$P_FULL" --gres="gpu:$T_FULL:$((N_FULL + 1))" -t 10 --wrap true
capture sbatch_test_only.invalid_partition.txt stderr as_user sbatch --test-only -p nosuch -t 10 --wrap true
capture sdiag.busy.txt stdout sdiag
if [[ $cluster == 2 ]]; then # what the second cluster's shape adds: a reservation and a QOS with limits
  capture scontrol_show_reservation.txt stdout scontrol show reservation
  capture sacctmgr_show_qos.txt stdout sacctmgr -n -P show qos format=Name,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxWall
  capture sacctmgr_show_assoc.txt stdout sacctmgr -n -P show assoc user="$TB_SSH_USER" format=Account,Partition,QOS,GrpTRES,MaxTRES,MaxJobs,MaxSubmit,DefaultQOS
  capture squeue_json.busy.txt stdout squeue --json
  capture sinfo_version.txt stdout sinfo --version
fi

# --- finished jobs in every end state ----------------------------------------------------------
tb_log "waiting for job $j_timeout to hit its 1-minute limit (up to ~90 s)"
tb_wait 150 in_state "$j_timeout" TIMEOUT || tb_die "job $j_timeout never timed out"
all_end() { [[ $(sacct -n -X -P -j "$j_completed,$j_failed,$j_timeout,$j_cancelled" -o State | cut -d' ' -f1 | sort | tr '\n' ' ') == 'CANCELLED COMPLETED FAILED TIMEOUT ' ]]; }
tb_wait 30 all_end || tb_die "sacct does not show the four end states"
capture sacct_states.txt stdout as_user sacct -P -X -j "$j_completed,$j_failed,$j_timeout,$j_cancelled" -o "$sacct_fmt"
capture sacct.txt stdout as_user sacct -X -j "$j_completed,$j_failed,$j_timeout,$j_cancelled"
# How early the last day's jobs ended (slurm/job_ends.hpp reads it counted; the tests count the
# rows themselves): every job of the day that ran and ended on its own.
capture sacct_job_ends.txt stdout sacct -a -X -n -P -S now-1days -E now -s CD,F,TO,OOM,NF,PR -o Partition,ElapsedRaw,TimelimitRaw

scancel "$j_fill1" "$j_fill2" "$j_h200" "$j_big" "$j_after" "$j_tmin" "$j_toolong"

{
  cat <<EOF2
# Slurm ${version} outputs captured from the rv testbed

Real outputs of Slurm ${version} on the loopback testbed
(${shape}; see docs/testbed.md). Made by \`testbed/capture.sh\`
on $(date -u +%Y-%m-%d); re-create with \`${remake}\` (as root,
cluster idle, ~2 min). Job ids and times change on every capture; nothing was edited by hand.

Scenarios (the file name's middle part):
* **idle**: no jobs on the GPU nodes (the cpu node runs/ran the end-state jobs below).
* **busy**: ${P_FULL} full (\`fill1\`, \`fill2\`: ${N_FULL} ${T_FULL} each, 10 and 20 min), \`h200\` running
  ($((N_PART / 2)) of ${N_PART} ${T_PART} in ${P_PART}), pending behind them in ${P_FULL}: \`big\` (2 nodes, Reason=Resources), \`after\`
  and \`tmin\` (\`--time-min 5\`, Reason=Priority), \`toolong\` (3 days > the partition's MaxTime,
  Reason=PartitionTimeLimit). Captured once backfill (bf_interval=2) had given \`big\` a start time.${busy_note}
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
