#!/usr/bin/env bash
# Captures a real NVIDIA driver's nvidia-smi answers to the exact queries rv sends (the preflight,
# the watchdog, `rv gpu`, `-L`), as parser test data for tests/data/nvidia-smi/real/. Run on a
# machine with an NVIDIA GPU (the `device` tool's machine): `bash scripts/capture_nvidia_smi_real.sh OUTDIR`.
# Each file is stdout then stderr of one command; `exit.txt` has every command's exit status.
# A short CUDA-free load is not possible without a runtime, so the compute-apps queries show the
# idle form (header only) unless a GPU process happens to run.
set -uo pipefail
out=${1:?usage: capture_nvidia_smi_real.sh OUTDIR}
mkdir -p "$out"
gpu_fields=$(grep -A1 "k_smi_gpu_fields =" "$(dirname "$0")/../slurm/nvidia_smi.hpp" | tail -n1 | tr -d " \";")
app_fields=gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory
: >"$out/exit.txt"
cap() { # name args...
  local name=$1 rc=0
  shift
  nvidia-smi "$@" >"$out/$name.txt" 2>&1 || rc=$?
  printf '%s\t%s\tnvidia-smi %s\n' "$name" "$rc" "$*" >>"$out/exit.txt"
}
cap list -L
cap query_gpu.csv --query-gpu="$gpu_fields" --format=csv
cap query_gpu.noheader_nounits --query-gpu="$gpu_fields" --format=csv,noheader,nounits
cap query_gpu.preflight --query-gpu=index,driver_version,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits
cap query_gpu.watchdog --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits
cap query_apps.csv --query-compute-apps="$app_fields" --format=csv
cap query_apps.noheader_nounits --query-compute-apps="$app_fields" --format=csv,noheader,nounits
# With a process on the GPU (when this machine's python3 has torch): the busy forms.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 -c 'import torch, time
x = torch.empty(1 << 28, device="cuda"); t = time.time()
while time.time() - t < 20: x.mul_(1.0001)
' &
  load=$!
  sleep 8
  cap query_gpu.busy.csv --query-gpu="$gpu_fields" --format=csv
  cap query_apps.busy.csv --query-compute-apps="$app_fields" --format=csv
  cap query_apps.busy.noheader_nounits --query-compute-apps="$app_fields" --format=csv,noheader,nounits
  cap query_gpu.busy.watchdog --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits
  wait "$load"
else
  echo "no torch with CUDA here: no busy captures" >"$out/busy.txt"
fi
cap query_gpu.unknown_field --query-gpu=index,no.such.field --format=csv
cap query_gpu.mig_mode --query-gpu=index,name,mig.mode.current,mig.mode.pending --format=csv
cap plain
cap version --version
printf 'gpu_fields=%s\n' "$gpu_fields" >"$out/fields.txt"
uname -a >"$out/uname.txt"
