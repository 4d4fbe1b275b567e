#!/usr/bin/env bash
# Stop every daemon testbed/up.sh started (by its pidfile only), then wipe $TB_DIR.
# Jobs still queued are cancelled first so that no slurmstepd or job process outlives the testbed.
# Cluster 2 (up2.sh) keeps running unless `--clusters 2` is given.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
# shellcheck source=testbed/containers.sh
. "$here/containers.sh"

t0=$(tb_now)
[[ $(id -u) == 0 ]] || tb_die "down.sh must run as root"
# --clusters 2: cluster 2 (down2.sh) first, then this one.
case ${1:-} in
  "") ;;
  --clusters=2 | --clusters) [[ ${1#--clusters} == =2 || ${2:-} == 2 ]] && bash "$here/down2.sh" ;;
  *) tb_die "unknown argument: $1 (usage: down.sh [--clusters 2])" ;;
esac

no_jobs_left() { [[ -z $(timeout 10 squeue -h -o %i 2>/dev/null) ]]; }
no_stepd_left() { [[ -z $(tb_stepds /) ]]; }

if tb_pid_alive "$TB_DIR/slurmctld.pid"; then
  mapfile -t jobs < <(timeout 10 squeue -h -o %i 2>/dev/null || true)
  if ((${#jobs[@]})); then
    tb_log "cancelling ${#jobs[@]} job(s)"
    timeout 10 scancel --full "${jobs[@]}" 2>/dev/null || true
    tb_wait 15 no_jobs_left || tb_log "warning: jobs still listed after 15 s"
  fi
fi

tb_stop_daemons < <(tb_pidfiles)

# Verify with ps: none of the pids we own may still run.
left=()
while read -r pidfile; do
  if tb_pid_alive "$pidfile"; then left+=("$(basename "$pidfile" .pid)=$(tb_pid_of "$pidfile")"); fi
done < <(tb_pidfiles)
((${#left[@]} == 0)) || tb_die "still running: ${left[*]}"
tb_wait 10 no_stepd_left || tb_log "warning: slurmstepd still running: $(tb_stepds / | tr '\n' ' ')"

if [[ -e $TB_DIR/.rv-testbed ]]; then
  # The stand-in nvidia-smi's link (up.sh) goes with the directory it points into.
  [[ $(readlink /usr/local/bin/nvidia-smi 2>/dev/null) != "$TB_DIR/bin/nvidia-smi" ]] || rm -f /usr/local/bin/nvidia-smi
  tb_apptainer_links_remove      # testbed/containers.sh
  rm -f /etc/pam.d/rvtb-2fa-sshd # testbed/sshd_2fa.sh
  rm -rf "$TB_DIR"
fi
tb_log "down in $(tb_since "$t0") s; stopped ${#TB_STOPPED[@]} daemon(s): ${TB_STOPPED[*]:-none}"
