#!/usr/bin/env bash
# Capture what `rv why` reads, with a job held behind a higher-priority one, as parser and
# explanation test data: tests/data/slurm/<version>/why/*.txt and a README.md saying how each was
# made. The scene, all on gpu-a6000 (one node, 8 GPUs):
#   run-a, run-b   4 GPUs each, running (limits 10 and 20 min): the partition is full
#   blocker        8 GPUs, 30 min, high priority (priority/basic: `scontrol update nice=-50000`)
#   mine           4 GPUs, 1 h, submitted after the blocker: pending behind it (Priority)
#   held           4 GPUs, --hold (JobHeldUser); dep: afterok on the blocker (Dependency);
#   later          --begin now+1hour (BeginTime); toolong: 3 days > MaxTime (PartitionTimeLimit)
# and an idle gpu-h200, where 4 GPUs would start at once (the counterfactual).
# Takes the testbed lock, needs an idle gpu-a6000, cancels every job it made (also on error).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/capture_kit.sh
. "$here/capture_kit.sh"
capture_kit_lock
idle() { [[ $(sinfo -h -N -p gpu-a6000,gpu-h200 -o %t | sort -u) == idle ]]; }
tb_wait 60 idle || tb_die "capture needs idle gpu-a6000 and gpu-h200 nodes: $(sinfo -N)"

capture_kit_out why "${1:-}"
reason_is() { [[ $(squeue -h -j "$1" -o %r 2>/dev/null) == "$2" ]]; }

g=(-p gpu-a6000 -c 4 --mem=16G)
run_a=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 10 -J run-a)
run_b=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 20 -J run-b)
for j in "$run_a" "$run_b"; do tb_wait 30 in_state "$j" RUNNING || tb_die "job $j did not start: $(squeue)"; done
blocker=$(submit "${g[@]}" --gres=gpu:a6000:8 -t 30 -J blocker --hold)
scontrol update jobid="$blocker" nice=-50000
scontrol release "$blocker"
mine=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 1:00:00 -J mine --comment "rv:0123abcd")
held=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 30 -J held --hold)
dep=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 30 -J dep --dependency="afterok:$blocker")
later=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 30 -J later --begin=now+1hour)
toolong=$(submit "${g[@]}" --gres=gpu:a6000:4 -t 3-00:00:00 -J toolong)
for j in "$blocker" "$mine"; do tb_wait 30 has_start "$j" || tb_die "backfill gave job $j no start time: $(squeue --start)"; done
tb_wait 30 reason_is "$dep" Dependency || tb_die "job $dep is not pending on its dependency: $(squeue)"

fmt='%i|%T|%r|%P|%u|%Q|%D|%S|%e|%l|%M|%b|%N|%Y|%j'
sacct_fields=JobID,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES,Partition,Reason,JobName
capture date.txt stdout as_user date '+%s %z'
capture squeue_request.txt stdout as_user env SLURM_TIME_FORMAT=standard squeue -h -t all -j "$mine" -o "$fmt"
capture squeue_pending.txt stdout as_user env SLURM_TIME_FORMAT=standard squeue -h -t PD -p gpu-a6000 -o "$fmt"
capture squeue_running.txt stdout as_user env SLURM_TIME_FORMAT=standard squeue -h -t R,CG -o "$fmt"
capture squeue_start.txt stdout as_user squeue --start
capture squeue.txt stdout as_user squeue
for j in mine blocker held dep later toolong; do
  capture "scontrol_show_job.$j.txt" stdout as_user env SLURM_TIME_FORMAT=standard scontrol -o show job "${!j}"
done
capture scontrol_show_partition.txt stdout as_user scontrol -o show partition
capture scontrol_show_node.txt stdout as_user scontrol -d -o show node
capture sbatch_test_only.a6000_4gpu_1h.txt stderr as_user sbatch --test-only "${g[@]}" --gres=gpu:a6000:4 -t 60 --wrap true
capture sbatch_test_only.h200_4gpu_1h.txt stderr as_user sbatch --test-only -p gpu-h200 -c 4 --mem=16G --gres=gpu:h200:4 -t 60 --wrap true

# Ended: the jobs as sacct records them once cancelled (CANCELLED, with their last reason).
as_user scancel "$mine" "$held" "$toolong"
gone() { [[ $(sacct -n -X -P -j "$mine,$held,$toolong" -o State | cut -d' ' -f1 | sort -u) == CANCELLED ]]; }
tb_wait 30 gone || tb_die "sacct does not show the cancelled jobs"
capture sacct_ended.txt stdout as_user env SLURM_TIME_FORMAT=standard sacct --parsable2 --noheader -j "$mine,$held,$toolong,$run_a" -o "$sacct_fields"

{
  cat <<EOF2
# A job held behind a higher-priority one (Slurm ${version}, rv testbed)

Made by \`testbed/capture_why.sh\` on $(date -u +%Y-%m-%d) (as root, testbed up, gpu-a6000 and
gpu-h200 idle; takes the testbed lock; cancels its jobs). Nothing was edited by hand. Jobs ran as
\`${TB_SSH_USER}\`, all on gpu-a6000 (1 node, 8 GPUs):

* \`run-a\` ($run_a), \`run-b\` ($run_b): 4 GPUs each, running, limits 10 and 20 min: the partition is full.
* \`blocker\` ($blocker): 8 GPUs, 30 min, priority raised (\`scontrol update nice=-50000\`): pending
  (Resources) with a start when \`run-b\`'s limit ends.
* \`mine\` ($mine, comment \`rv:0123abcd\` as rv sets it): 4 GPUs, 1 h, submitted after the
  blocker: pending (Priority) behind it.
* \`held\` ($held, \`--hold\`: JobHeldUser), \`dep\` ($dep, afterok on the blocker: Dependency),
  \`later\` ($later, \`--begin now+1hour\`: BeginTime), \`toolong\` ($toolong, 3 days > MaxTime 2 days:
  PartitionTimeLimit).
* gpu-h200 idle: \`sbatch --test-only\` for 4 H200 answers a start now.

\`sacct_ended.txt\`: \`mine\`, \`held\` and \`toolong\` after \`scancel\` (CANCELLED, with Reason), and
\`run-a\` still running.

| file | command | stream kept | exit code |
| --- | --- | --- | --- |
EOF2
  printf '%s\n' "${index[@]}"
} >"$out/README.md"
tb_log "captured ${#index[@]} outputs into $out"
