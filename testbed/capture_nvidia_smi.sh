#!/usr/bin/env bash
# Captures the testbed's stand-in nvidia-smi (testbed/nvidia-smi) inside real jobs as parser test
# data: tests/data/nvidia-smi/standin/<name>.txt, and a README that says how each was made. The
# per-node state it sets (util, mem_used, temp, apps) is put back afterwards. Run it under the
# testbed lock: `flock /tmp/rv-testbed.lock bash testbed/capture_nvidia_smi.sh`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
[[ -f $TB_DIR/env ]] || tb_die "no testbed: run testbed/up.sh first"
out=${1:-$here/../tests/data/nvidia-smi/standin}
mkdir -p "$out"
state=$TB_DIR/gpu/a100-1
saved=$(mktemp -d)
for f in util util.1 mem_used mem_used.1 temp apps; do [[ -e $state/$f ]] && cp -p "$state/$f" "$saved/$f"; done
restore() {
  for f in util util.1 mem_used mem_used.1 temp apps; do
    rm -f "$state/$f"
    [[ -e $saved/$f ]] && cp -p "$saved/$f" "$state/$f"
  done
  rm -rf "$saved"
}
trap restore EXIT
echo 35 >"$state/util"
echo 97 >"$state/util.1"
echo 10240 >"$state/mem_used"
echo 40110 >"$state/mem_used.1"
echo 44 >"$state/temp"
printf '0|41233|python|10230\n1|41234|/usr/bin/python3|40100\n' >"$state/apps"

q_gpu=index,name,uuid,pci.bus_id,utilization.gpu,memory.used,memory.total,temperature.gpu
q_app=gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory
readme=$out/README.md
{
  echo "# Outputs of the testbed's stand-in nvidia-smi (not a real driver)"
  echo
  echo "Captured by \`testbed/capture_nvidia_smi.sh\` inside \`srun -p gpu-a100 --gres=gpu:a100:2\` (a100-1) and"
  echo "\`srun -p gpu-mig --gres=gpu:a100_1g.10gb:2\` (mig-1), with util 35/97 %, memory 10240/40110 MiB,"
  echo "temperature 44 C and two processes set in \`\$TB_DIR/gpu/a100-1/\`. Real-format samples from public"
  echo "sources are in \`../real/\` (their README names each source)."
  echo
  echo "| file | command |"
  echo "| --- | --- |"
} >"$readme"
cap() { # cap FILE PARTITION GRES ARGS...
  local file=$1 part=$2 gres=$3
  shift 3
  runuser -u "$TB_SSH_USER" -- srun -p "$part" --gres="$gres" -t 1 nvidia-smi "$@" >"$out/$file" 2>&1 || true
  echo "| \`$file\` | \`nvidia-smi $*\` on $part |" >>"$readme"
}
cap query_gpu.csv.txt gpu-a100 gpu:a100:2 --query-gpu=$q_gpu --format=csv
cap query_gpu.noheader_nounits.txt gpu-a100 gpu:a100:2 --query-gpu=$q_gpu --format=csv,noheader,nounits
cap query_gpu.noheader.txt gpu-a100 gpu:a100:2 --query-gpu=$q_gpu --format=csv,noheader
cap query_apps.csv.txt gpu-a100 gpu:a100:2 --query-compute-apps=$q_app --format=csv
cap query_apps.noheader_nounits.txt gpu-a100 gpu:a100:2 --query-compute-apps=$q_app --format=csv,noheader,nounits
cap list.txt gpu-a100 gpu:a100:2 -L
cap list.mig.txt gpu-mig gpu:a100_1g.10gb:2 -L
cap query_gpu.mig.csv.txt gpu-mig gpu:a100_1g.10gb:2 --query-gpu=$q_gpu --format=csv
echo "captured into $out"
