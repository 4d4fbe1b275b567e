#!/usr/bin/env bash
# Capture the scheduler's queue with backfill reservations in place, for rv's window model
# (slurm/queue.hpp, strategy/window_model.hpp): tests/data/slurm/<version>/window/*.txt and a
# README.md saying how each was made. Several shapes at once, each a window in front of a
# high-priority job's reservation (priority/basic: `scontrol update ... nice=-50000` as root):
#   gpu-a6000  4 of 8 running (limits 10, 20 min); `blk6k` 8 GPUs high priority: 4 idle until it
#   gpu-v100   3 of 4 running (15 min); `blkv100` 4 GPUs high: 1 idle until it
#   gpu-h200   2 of 4 running (10 min); `blkh200` 3 GPUs high: 2 idle until it, then 1 for ever
#   gpu-a100   4 of 8 running on each node (25 min); `blka100` 2x8 high: 4+4 idle until it
#   gpu-a6000  `scav` 4 GPUs, nice +50000 (a scavenger behind the blocker)
# Takes the testbed lock, needs idle GPU nodes, cancels every job it made (also on error).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/capture_kit.sh
. "$here/capture_kit.sh"
capture_kit_lock
gpu_idle() { [[ $(sinfo -h -N -p gpu-a100,gpu-a6000,gpu-v100,gpu-h200 -o %t | sort -u) == idle ]]; }
tb_wait 60 gpu_idle || tb_die "capture needs idle GPU nodes: $(sinfo -N)"

capture_kit_out window "${1:-}"
high() { scontrol update jobid="$1" nice=-50000; }

r=()
r+=("$(submit -p gpu-a6000 --gres=gpu:a6000:2 -c 4 --mem=16G -t 10 -J run6k-a)")
r+=("$(submit -p gpu-a6000 --gres=gpu:a6000:2 -c 4 --mem=16G -t 20 -J run6k-b)")
r+=("$(submit -p gpu-v100 --gres=gpu:v100:3 -c 4 --mem=16G -t 15 -J runv100)")
r+=("$(submit -p gpu-h200 --gres=gpu:h200:2 -c 8 --mem=64G -t 10 -J runh200)")
r+=("$(submit -p gpu-a100 -w a100-1 --gres=gpu:a100:4 -c 8 --mem=64G -t 25 -J runa100-1)")
r+=("$(submit -p gpu-a100 -w a100-2 --gres=gpu:a100:4 -c 8 --mem=64G -t 25 -J runa100-2)")
for j in "${r[@]}"; do tb_wait 30 in_state "$j" RUNNING || tb_die "job $j did not start: $(squeue)"; done
b=()
b+=("$(submit -p gpu-a6000 --gres=gpu:a6000:8 -c 8 --mem=32G -t 30 -J blk6k --hold)")
b+=("$(submit -p gpu-v100 --gres=gpu:v100:4 -c 4 --mem=16G -t 30 -J blkv100 --hold)")
b+=("$(submit -p gpu-h200 --gres=gpu:h200:3 -c 8 --mem=64G -t 30 -J blkh200 --hold)")
b+=("$(submit -p gpu-a100 -N 2 --gres=gpu:a100:8 -c 8 --mem=64G -t 30 -J blka100 --hold)")
for j in "${b[@]}"; do high "$j"; done
scontrol release "${b[@]}"
for j in "${b[@]}"; do tb_wait 30 has_start "$j" || tb_die "backfill gave job $j no start time: $(squeue --start)"; done
# Behind the blocker: 100 min do not fit in front of its reservation, so it pends.
scav=$(submit -p gpu-a6000 --gres=gpu:a6000:4 -c 4 --mem=16G -t 100 -J scav --nice=50000)
tb_wait 30 has_start "$scav" || tb_die "backfill gave the scavenger no start time: $(squeue --start)"

fmt='%i|%T|%P|%D|%Q|%S|%e|%b|%N|%Y|%r|%j'
capture date.txt stdout as_user date '+%s %z'
capture squeue.txt stdout as_user env SLURM_TIME_FORMAT=standard squeue -h -t PD,R,CG -o "$fmt"
capture scontrol_show_node.txt stdout as_user scontrol -d -o show node
capture scontrol_show_partition.txt stdout as_user scontrol -o show partition
capture squeue_start.txt stdout as_user squeue --start
capture scontrol_show_job.txt stdout as_user scontrol -o show job
capture sbatch_test_only.a6000_4gpu_1min.txt stderr as_user sbatch --test-only -p gpu-a6000 --gres=gpu:a6000:4 -c 4 --mem=16G -t 1 --wrap true
capture sbatch_test_only.a6000_4gpu_5min.txt stderr as_user sbatch --test-only -p gpu-a6000 --gres=gpu:a6000:4 -c 4 --mem=16G -t 5 --wrap true
capture sbatch_test_only.h200_1gpu_60min.txt stderr as_user sbatch --test-only -p gpu-h200 --gres=gpu:h200:1 -c 8 --mem=64G -t 60 --wrap true
capture date_end.txt stdout as_user date '+%s %z'
# The blind spot, for the record: a real 5-minute 4-GPU job on gpu-a6000 starts at once.
real=$(submit -p gpu-a6000 --gres=gpu:a6000:4 -c 4 --mem=16G -t 5 -J realwin)
if tb_wait 10 in_state "$real" RUNNING; then real_state=RUNNING; else real_state=$(state_of "$real"); fi
capture squeue_after_real.txt stdout as_user env SLURM_TIME_FORMAT=standard squeue -h -t PD,R,CG -o "$fmt"

{
  cat <<EOF2
# The queue with backfill reservations in place (Slurm ${version}, rv testbed)

Made by \`testbed/capture_window.sh\` on $(date -u +%Y-%m-%d) (as root, testbed up, GPU nodes
idle; takes the testbed lock; cancels its jobs). Nothing was edited by hand. Shapes (jobs as
\`${TB_SSH_USER}\`; the blockers' priority raised with \`scontrol update nice=-50000\`):

* gpu-a6000: \`run6k-a\`, \`run6k-b\` (2 GPUs each, limits 10 and 20 min) run; \`blk6k\` (8 GPUs,
  high priority) pends with a reservation when \`run6k-b\`'s limit ends: 4 GPUs idle until then.
  \`scav\` (4 GPUs, 100 min, nice +50000) pends behind it.
* gpu-v100: \`runv100\` (3 of 4, 15 min); \`blkv100\` (4 GPUs, high): 1 GPU idle until it starts.
* gpu-h200: \`runh200\` (2 of 4, 10 min); \`blkh200\` (3 GPUs, high): 2 idle until it starts, then 1
  for as long as the blocker runs and after.
* gpu-a100: \`runa100-1/2\` (4 of 8 on each node, 25 min); \`blka100\` (2 nodes x 8, high): 4 + 4
  idle until it starts.
* gpu-mig: idle.

\`sbatch --test-only\` answers for 4 GPUs on gpu-a6000 are the blind spot: it places a 1-minute
job after the reservation, while a real 5-minute job (\`realwin\`, submitted after the captures)
was **${real_state}** within 10 s (\`squeue_after_real.txt\`).

| file | command | stream kept | exit code |
| --- | --- | --- | --- |
EOF2
  printf '%s\n' "${index[@]}"
} >"$out/README.md"
tb_log "captured ${#index[@]} outputs into $out (realwin: $real_state)"
