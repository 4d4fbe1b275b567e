#!/usr/bin/env bash
# Stop cluster 2 (testbed/up2.sh): cancel its jobs, stop its daemons by their pidfiles, unmount
# what up2.sh bound into the root, wipe $TB2_DIR. The root itself stays cached; the 22.05 cluster
# is not touched.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
# shellcheck source=testbed/lib2.sh
. "$here/lib2.sh"

t0=$(tb_now)
[[ $(id -u) == 0 ]] || tb_die "down2.sh must run as root"

no_jobs_left() { [[ -z $(timeout 10 chroot "$TB2_ROOT" /usr/bin/squeue -h -o %i 2>/dev/null) ]]; }
no_stepd_left() { [[ -z $(tb_stepds "$TB2_ROOT") ]]; }

if tb_pid_alive "$TB2_DIR/slurmctld.pid"; then
  mapfile -t jobs < <(timeout 10 chroot "$TB2_ROOT" /usr/bin/squeue -h -o %i 2>/dev/null || true)
  if ((${#jobs[@]})); then
    tb_log "cluster 2: cancelling ${#jobs[@]} job(s)"
    timeout 10 chroot "$TB2_ROOT" /usr/bin/scancel --full "${jobs[@]}" 2>/dev/null || true
    tb_wait 15 no_jobs_left || tb_log "warning: cluster 2 jobs still listed after 15 s"
  fi
fi

tb_stop_daemons < <(tb2_pidfiles)
tb_wait 10 no_stepd_left || tb_log "warning: cluster 2 slurmstepd still running: $(tb_stepds "$TB2_ROOT" | tr '\n' ' ')"

# Innermost first; a busy mount (a shell still inside the root) is detached lazily.
mapfile -t mounts < <(tb2_mounts)
for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
  m=${mounts[i]}
  mountpoint -q "$m" || continue
  umount -R "$m" 2>/dev/null || umount -R -l "$m" || tb_die "cannot unmount $m"
done
if [[ -e $TB2_DIR/.rv-testbed ]]; then
  rm -rf "$TB2_DIR"
fi
tb_ssh_config_add_cluster2 # takes rvtb2 out of cluster 1's ssh config
tb_log "cluster 2 down in $(tb_since "$t0") s; stopped ${#TB_STOPPED[@]} daemon(s): ${TB_STOPPED[*]:-none}"
