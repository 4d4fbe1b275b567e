# shellcheck shell=bash
# Settings and helpers of the second testbed cluster (Slurm 24.11 in a Debian 13 root, beside the
# 22.05 cluster of up.sh): sourced after testbed/lib.sh by up2.sh, down2.sh, capture.sh and the
# integration tests' lib (RV_IT_CLUSTER=2). docs/testbed.md, "The second cluster".

# shellcheck disable=SC2034  # the settings are used by the scripts that source this file
TB2_DIR=${TB2_DIR:-/tmp/rv-testbed2}
# The Debian 13 root, built once by up2.sh (debootstrap) and kept between runs: the daemons run
# from it (chroot) with /proc, /sys, /dev and $TB2_DIR bound in, and its own /tmp.
TB2_CACHE=${TB2_CACHE:-/var/cache/rv-testbed}
TB2_ROOT=${TB2_ROOT:-$TB2_CACHE/trixie}
TB2_SUITE=trixie
TB2_PACKAGES=slurmctld,slurmd,slurm-client,slurmdbd,munge,mariadb-server,openssh-server,procps,rsync,python3,python3-venv,libslurm-dev
TB2_CLUSTER=rvtest2
TB2_HOST=rvtb2
TB2_SSH_PORT=2232
TB2_CTLD_PORT=6827
TB2_DBD_PORT=6829
TB2_DB_PORT=3308
# Simulated nodes, the same fields as TB_NODES (testbed/lib.sh); the partition field may name
# several partitions (comma-separated): l40s-1 is in ada and in debug.
TB2_NODES=(
  "h100-1|hopper|17101|48|2|24|768000|h100|4|800"
  "h100-2|hopper|17102|48|2|24|768000|h100|4|800"
  "l40s-1|ada,debug|17103|32|1|32|256000|l40s|2|250"
  "mig-1|mig|17104|16|1|16|128000|h100_3g.40gb|2|300"
  "c-1|compute|17105|8|1|8|32000|||"
)
# Partitions: name|MaxTime|DefaultTime|more of the PartitionName line
TB2_PARTITIONS=(
  "hopper|1-00:00:00|00:30:00|"
  "ada|2-00:00:00|01:00:00|"
  "debug|00:30:00|00:10:00|MaxNodes=1 PriorityTier=2"
  "mig|12:00:00|01:00:00|"
  "compute|7-00:00:00|01:00:00|Default=YES"
)
# The QOS every rvtest job runs under (its default): per-user limits rv reads in discovery.
TB2_QOS=rvlimit
TB2_QOS_LIMITS="MaxTRESPerUser=gres/gpu=8 MaxJobsPerUser=20 MaxSubmitJobsPerUser=50 MaxWall=1-00:00:00"
# A maintenance reservation a day ahead on h100-2: jobs that would run into it wait.
TB2_RESERVATION="ReservationName=rv-maint StartTime=now+1day Duration=04:00:00 Nodes=h100-2 Users=root Flags=MAINT,IGNORE_JOBS"

# A command inside the root, with the root's own PATH (the host's may name $TB2_DIR/bin, whose
# wrappers are visible inside the root too and would chroot again).
TB2_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
tb2_chroot() { chroot "$TB2_ROOT" /usr/bin/env PATH="$TB2_PATH" "$@"; }

# Slurm's client commands of the root, as host commands (for root on the host: chroot needs it).
TB2_CLIENTS=(sbatch squeue scancel scontrol sinfo sacct sacctmgr sshare sprio sdiag srun salloc sstat)

tb2_node_names() {
  local line
  for line in "${TB2_NODES[@]}"; do printf '%s\n' "${line%%|*}"; done
}

# Every pidfile cluster 2 owns, in stop order.
tb2_pidfiles() {
  local n
  printf '%s\n' "$TB2_DIR/sshd.pid"
  while read -r n; do printf '%s\n' "$TB2_DIR/slurmd-$n.pid"; done < <(tb2_node_names)
  printf '%s\n' "$TB2_DIR/slurmctld.pid" "$TB2_DIR/slurmdbd.pid" "$TB2_DIR/db/mysqld.pid" "$TB2_DIR/munge/munged.pid"
}

# The mount points up2.sh binds into the root, innermost last.
tb2_mounts() { printf '%s\n' "$TB2_ROOT/proc" "$TB2_ROOT/sys" "$TB2_ROOT/dev" "$TB2_ROOT$TB2_DIR"; }

# True when the root is built (up2.sh writes the marker last).
tb2_root_ok() { [[ -f $TB2_ROOT/.rv-testbed-root && -x $TB2_ROOT/usr/sbin/slurmctld ]]; }

# Nodes of cluster 2 all registered and answering.
tb2_nodes_ok() {
  local states
  states=$(timeout 10 chroot "$TB2_ROOT" /usr/bin/sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [[ $(wc -l <<<"$states") -eq ${#TB2_NODES[@]} ]] || return 1
  ! grep -Eq ' (down|drain|drng|inval|unk|fail|npc)|\*' <<<"$states" # plnd: idle, planned by backfill (23.02+)
}

# True when cluster 2 runs: every daemon alive, its munge works, its nodes answer.
tb2_is_up() {
  local pidfile
  [[ -f $TB2_DIR/env ]] && tb2_root_ok || return 1
  while read -r pidfile; do
    tb_pid_alive "$pidfile" || return 1
  done < <(tb2_pidfiles)
  tb2_chroot sh -c 'munge -n </dev/null | unmunge >/dev/null' 2>/dev/null || return 1
  tb2_nodes_ok
}

# The slurmctld of the cluster whose env is sourced (TB_DIR; TB_ROOT only on cluster 2), for the
# tests that stop it (test_recovery, tests/fault/campaign.sh): by its pidfile, never by name (both
# clusters' controllers are called slurmctld: cluster 2's runs the root's /usr/sbin/slurmctld, a
# link to slurmctld-wlm, so `pgrep -x slurmctld` sees both), and started again where it ran.
tb_ctld_alive() { tb_pid_alive "${TB_DIR:?}/slurmctld.pid"; }
tb_ctld_start() {
  if [[ -n ${TB_ROOT:-} ]]; then chroot "$TB_ROOT" /usr/bin/env PATH="$TB2_PATH" slurmctld; else slurmctld; fi
}
