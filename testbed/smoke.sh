#!/usr/bin/env bash
# Quick end-to-end check of a running testbed (~5 s): nodes, GPUs, billing, the ssh login node,
# a real GPU job as rvtest from /home/rvtest, --test-only output, and accounting.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
[[ -f $TB_DIR/env ]] || tb_die "no $TB_DIR/env: run testbed/up.sh first"
# shellcheck source=/dev/null
. "$TB_DIR/env"

t0=$(tb_now)
checks=0
ok() {
  checks=$((checks + 1))
  printf 'ok %d - %s\n' "$checks" "$*"
}
fail() {
  printf 'not ok - %s\n' "$*" >&2
  exit 1
}
rssh() { ssh -F "$TB_SSH_CONFIG" rvtb "$@"; }

nodes=$(sinfo -h -N -o '%N|%P|%t|%G')
[[ $(wc -l <<<"$nodes") -eq ${#TB_NODES[@]} ]] || fail "expected ${#TB_NODES[@]} nodes, got: $nodes"
! grep -Eqv '\|(idle|mix|alloc)$' <<<"$(cut -d'|' -f1-3 <<<"$nodes")" || fail "node not usable: $nodes"
ok "${#TB_NODES[@]} nodes up"
for line in "${TB_NODES[@]}"; do
  IFS='|' read -r name part _ _ _ _ _ gtype gcount _ <<<"$line"
  want="gpu:$gtype:$gcount"
  [[ -n $gtype ]] || want='(null)'
  grep -qx "$name|$part\*\?|[a-z]*|$want.*" <<<"$nodes" || fail "$name: want $part $want in: $nodes"
done
ok "partitions and GPU types per node"

if [[ $TB_ACCOUNTING == 1 ]]; then
  scontrol show partition gpu-h200 | grep -q 'TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=1000' ||
    fail "gpu-h200 billing weights"
  ok "TRESBillingWeights with GRES/gpu"
  sacctmgr -n -P show assoc where user="$TB_SSH_USER" format=account | grep -qx rvacct || fail "rvtest not in rvacct"
  ok "rvtest associated with rvacct"
fi

[[ $(rssh pwd) == "/home/$TB_SSH_USER" ]] || fail "ssh login does not land in /home/$TB_SSH_USER"
ok "ssh -F \$TB_SSH_CONFIG rvtb works, lands in /home/$TB_SSH_USER"
ssh -p "$TB_SSH_PORT" -i "$TB_SSH_KEY" -o UserKnownHostsFile="$TB_SSH_KNOWN_HOSTS" -o StrictHostKeyChecking=yes \
  -o BatchMode=yes "$TB_SSH_USER@${TB_SSH_HOST:?}" true || fail "ssh with the TB_SSH_* variables"
ok "ssh with TB_SSH_HOST/PORT/USER/KEY/KNOWN_HOSTS"

probe=$(rssh sbatch --test-only -p gpu-a100 --gres=gpu:a100:1 -t 10 --wrap true 2>&1)
grep -Eq '^sbatch: Job [0-9]+ to start at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} using [0-9]+ processors on nodes \S+ in partition gpu-a100$' <<<"$probe" ||
  fail "sbatch --test-only: $probe"
ok "sbatch --test-only line"

job=$(rssh sbatch --parsable -p gpu-h200 --gres=gpu:h200:2 -t 2 -o smoke-%j.out \
  --wrap "'echo node=\$SLURMD_NODENAME gpus=\$CUDA_VISIBLE_DEVICES; pwd'")
job_done() { [[ $(squeue -h -t all -j "$job" -o %T 2>/dev/null) == COMPLETED ]]; }
tb_wait 20 job_done || fail "job $job did not complete: $(squeue -t all -j "$job")"
out=$(rssh cat "smoke-$job.out")
rssh rm -f "smoke-$job.out"
[[ $out == $'node=h200-1 gpus=0,1\n/home/'"$TB_SSH_USER" ]] || fail "job output: $out"
ok "GPU job $job ran as $TB_SSH_USER in /home/$TB_SSH_USER with CUDA_VISIBLE_DEVICES=0,1"

if [[ $TB_ACCOUNTING == 1 ]]; then
  in_sacct() { rssh sacct -n -X -P -j "$job" -o State,Account 2>/dev/null | grep -qx 'COMPLETED|rvacct'; }
  tb_wait 20 in_sacct || fail "sacct has no COMPLETED record for job $job"
  ok "sacct shows job $job COMPLETED under rvacct"
fi
printf 'smoke: %d checks passed in %s s\n' "$checks" "$(tb_since "$t0")"
