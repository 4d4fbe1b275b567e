#!/usr/bin/env bash
# Start the second testbed cluster: Slurm 24.11 from a Debian 13 root (built once with debootstrap
# into $TB2_CACHE and kept), beside the 22.05 cluster of up.sh, which it never touches. Its own
# munge key, MariaDB + slurmdbd, slurmctld, one `slurmd -N` per node and an sshd login node
# (`rvtb2`, 127.0.0.1:2232) all run inside the root (chroot). Idempotent like up.sh.
# Env: TB2_DIR (default /tmp/rv-testbed2), TB2_CACHE (default /var/cache/rv-testbed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
# shellcheck source=testbed/lib2.sh
. "$here/lib2.sh"
# shellcheck source=testbed/containers.sh
. "$here/containers.sh"

t0=$(tb_now)
[[ $(id -u) == 0 ]] || tb_die "up2.sh must run as root"
tb_close_inherited_fds
R=$TB2_ROOT
E=$R/etc/slurm

build_root() {
  command -v debootstrap >/dev/null || tb_apt_install debootstrap
  local t1 tmp=$R.building mirror
  t1=$(tb_now)
  # The mirror apt already uses on this machine (Debian 12 reaches Debian 13's suite there).
  mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
    grep -oE 'https?://[^ ]+' | head -1 || true)
  tb_log "building the Debian 13 root in $R (debootstrap, once; ~3 min)"
  rm -rf "$tmp"
  install -d -m 755 "$TB2_CACHE"
  debootstrap --variant=minbase --include="$TB2_PACKAGES" "$TB2_SUITE" "$tmp" ${mirror:+"$mirror"} \
    >"$TB2_CACHE/debootstrap.log" 2>&1 || tb_die "debootstrap failed; see $TB2_CACHE/debootstrap.log"
  rm -rf "$tmp"/var/cache/apt/archives/*.deb
  touch "$tmp/.rv-testbed-root"
  rm -rf "$R"
  mv "$tmp" "$R"
  tb_log "root built in $(tb_since "$t1") s"
}

mount_root() {
  mountpoint -q "$R/proc" || mount -t proc proc "$R/proc"
  local d
  for d in sys dev; do
    if ! mountpoint -q "$R/$d"; then
      mount --rbind "/$d" "$R/$d"
      mount --make-rslave "$R/$d" # unmounting it later must not unmount the host's /dev/pts
    fi
  done
  install -d -m 755 "$R$TB2_DIR"
  mountpoint -q "$R$TB2_DIR" || mount --bind "$TB2_DIR" "$R$TB2_DIR"
}

write_conf() {
  local line name part gtype weight acct_tres=gres/gpu p
  local -A part_nodes=() part_weight=()
  for line in "${TB2_NODES[@]}"; do
    IFS='|' read -r name part _ _ _ _ _ gtype _ weight <<<"$line"
    for p in ${part//,/ }; do
      part_nodes[$p]+="${part_nodes[$p]:+,}$name"
      part_weight[$p]=$weight
    done
    [[ -z $gtype || "$acct_tres," == *",gres/gpu:$gtype,"* ]] || acct_tres+=",gres/gpu:$gtype"
  done
  {
    tb_conf_common "testbed/up2.sh (cluster 2, Slurm 24.11)" "$TB2_CLUSTER" "$TB2_DIR" "$TB2_CTLD_PORT" 6828
    cat <<EOF
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
GresTypes=gpu
DefMemPerCPU=2000
ReturnToService=2
KillWait=5
MinJobAge=600
MessageTimeout=10
SlurmdTimeout=60
JobCompType=jobcomp/filetxt
JobCompLoc=$TB2_DIR/jobcomp/jobcomp.log
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$TB2_DBD_PORT
AccountingStorageTRES=$acct_tres
AccountingStorageEnforce=associations,limits,qos
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
EOF
    tb_conf_node_lines "${TB2_NODES[@]}"
    local maxt deft more
    for line in "${TB2_PARTITIONS[@]}"; do
      IFS='|' read -r p maxt deft more <<<"$line"
      printf 'PartitionName=%s Nodes=%s MaxTime=%s DefaultTime=%s State=UP' "$p" "${part_nodes[$p]}" "$maxt" "$deft"
      [[ -z ${part_weight[$p]} ]] || printf ' TRESBillingWeights="CPU=0.5,Mem=0.125G,GRES/gpu=%s"' "${part_weight[$p]}"
      printf '%s\n' "${more:+ $more}"
    done
  } >"$E/slurm.conf"
  chmod 644 "$E/slurm.conf"
  # 24.11's slurmd refuses to start without a cgroup plugin it can use; this root has no systemd.
  printf 'CgroupPlugin=disabled\n' >"$E/cgroup.conf"
  tb_gres_conf "$TB2_DIR" "${TB2_NODES[@]}" >"$E/gres.conf"
  chmod 644 "$E/gres.conf" "$E/cgroup.conf"
}

start_munge() {
  tb2_chroot sh -c 'install -d -o munge -g munge -m 0755 /run/munge &&
    chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge'
  [[ -s $R/etc/munge/munge.key ]] || tb2_chroot runuser -u munge -- mungekey -c -k /etc/munge/munge.key -b 1024
  install -d -o "$(stat -c %u "$R/etc/munge")" -m 0755 "$TB2_DIR/munge"
  tb2_chroot runuser -u munge -- /usr/sbin/munged --pid-file="$TB2_DIR/munge/munged.pid" \
    --log-file="$TB2_DIR/munge/munged.log"
  tb_wait 10 tb_pid_alive "$TB2_DIR/munge/munged.pid" || tb_die "munged (root) did not start; see $TB2_DIR/munge/munged.log"
}

start_mariadb() { tb_start_mariadb "$TB2_DIR" "$TB2_DB_PORT" tb2_chroot; }

start_slurmdbd() {
  tb_slurmdbd_conf "$TB2_DIR" "$TB2_DBD_PORT" "$TB2_DB_PORT" >"$E/slurmdbd.conf"
  chmod 600 "$E/slurmdbd.conf"
  tb2_chroot slurmdbd
  tb_wait 20 tb_pid_alive "$TB2_DIR/slurmdbd.pid" || tb_die "slurmdbd (root) did not start; see $TB2_DIR/log/slurmdbd.log"
  dbd_ready() { tb2_chroot sacctmgr -n list cluster >/dev/null 2>&1; }
  tb_wait 20 dbd_ready || tb_die "slurmdbd (root) does not answer; see $TB2_DIR/log/slurmdbd.log"
  local m="tb2_chroot sacctmgr -i"
  $m add cluster "$TB2_CLUSTER" >/dev/null
  $m add account "$TB_ACCOUNT" Cluster="$TB2_CLUSTER" Description=rvtest Organization=rv >/dev/null
  $m add user root Account="$TB_ACCOUNT" DefaultAccount="$TB_ACCOUNT" >/dev/null
  $m add user "$TB_SSH_USER" Account="$TB_ACCOUNT" DefaultAccount="$TB_ACCOUNT" >/dev/null
}

# After slurmctld registered the GPU TRES (a QOS limit on gres/gpu before that is refused:
# "no TRES known by type gres/gpu").
add_qos() {
  local m="tb2_chroot sacctmgr -i"
  # shellcheck disable=SC2086  # the limits are words
  $m add qos "$TB2_QOS" $TB2_QOS_LIMITS >/dev/null
  $m modify user "$TB_SSH_USER" set QOS="normal,$TB2_QOS" DefaultQOS="$TB2_QOS" >/dev/null
}

all_idle() {
  tb_pid_alive "$TB2_DIR/slurmctld.pid" || tb_die "slurmctld (root) died; see $TB2_DIR/log/slurmctld.log"
  local states
  states=$(timeout 10 chroot "$TB2_ROOT" /usr/bin/sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [[ $(grep -c ' idle$' <<<"$states") -eq ${#TB2_NODES[@]} ]]
}

start_slurm() {
  local n
  tb2_chroot slurmctld
  tb_wait 20 tb_pid_alive "$TB2_DIR/slurmctld.pid" || tb_die "slurmctld (root) did not start; see $TB2_DIR/log/slurmctld.log"
  while read -r n; do
    mkdir -p "$TB2_DIR/spool/$n"
    tb2_chroot slurmd -N "$n"
  done < <(tb2_node_names)
  tb_wait 90 all_idle || {
    tb2_chroot sinfo -N >&2 || true
    tb_die "cluster 2's nodes not idle after 90 s; see $TB2_DIR/log/"
  }
  [[ ! -e $TB2_DIR/jobcomp/jobcomp.log ]] || chmod 666 "$TB2_DIR/jobcomp/jobcomp.log"
  # shellcheck disable=SC2086  # the reservation's words
  tb2_chroot scontrol create reservation $TB2_RESERVATION >/dev/null
}

# rvtest in the root with the host's uid (files in $TB2_DIR are shared), before sacctmgr.
ensure_user() {
  local uid
  uid=$(id -u "$TB_SSH_USER" 2>/dev/null || true)
  if ! tb2_chroot id "$TB_SSH_USER" >/dev/null 2>&1; then
    tb2_chroot useradd -m -d "/home/$TB_SSH_USER" -s /bin/bash ${uid:+-u "$uid"} "$TB_SSH_USER"
  fi
  tb2_chroot usermod -p '*' "$TB_SSH_USER"
  tb2_chroot install -d -o "$TB_SSH_USER" -g "$TB_SSH_USER" -m 755 "/home/$TB_SSH_USER"
}

start_sshd() {
  local s=$TB2_DIR/ssh
  install -d -m 755 "$s"
  ssh-keygen -q -t ed25519 -N '' -C rv-testbed2-host -f "$s/ssh_host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C rv-testbed2 -f "$s/id_ed25519"
  tb2_chroot sh -c "install -d -o $TB_SSH_USER -g $TB_SSH_USER -m 700 /home/$TB_SSH_USER/.ssh &&
    install -o $TB_SSH_USER -g $TB_SSH_USER -m 600 $s/id_ed25519.pub /home/$TB_SSH_USER/.ssh/authorized_keys"
  {
    printf '[127.0.0.1]:%s %s\n' "$TB2_SSH_PORT" "$(cat "$s/ssh_host_ed25519_key.pub")"
    printf '[localhost]:%s %s\n' "$TB2_SSH_PORT" "$(cat "$s/ssh_host_ed25519_key.pub")"
  } >"$s/known_hosts"
  tb_sshd_config "$TB2_DIR" "$TB2_SSH_PORT" >"$s/sshd_config"
  # The Host block also goes into cluster 1's $TB_SSH_CONFIG (up.sh keeps it there on a restart).
  {
    echo "# OpenSSH client config for the rv testbed's second cluster (Slurm 24.11): ssh -F $s/config $TB2_HOST"
    tb_ssh_host "$TB2_HOST" "$TB2_DIR" "$TB2_SSH_PORT"
  } >"$s/config"
  tb2_chroot install -d -m 0755 /run/sshd
  tb2_chroot /usr/sbin/sshd -t -f "$s/sshd_config"
  tb2_chroot /usr/sbin/sshd -f "$s/sshd_config" -E "$TB2_DIR/log/sshd.log"
  tb_wait 10 tb_pid_alive "$TB2_DIR/sshd.pid" || tb_die "sshd (root) did not start; see $TB2_DIR/log/sshd.log"
}

# The stand-in nvidia-smi inside the root (every job's PATH there), its state in $TB2_DIR/gpu.
ensure_gpu_standin() {
  tb_gpu_state "$TB2_DIR/gpu" "${TB2_NODES[@]}"
  sed "s|^TB_DIR=.*|TB_DIR=\${TB_DIR:-$TB2_DIR}|" "$here/nvidia-smi" >"$R/usr/local/bin/nvidia-smi"
  chmod 755 "$R/usr/local/bin/nvidia-smi"
}

# Host-side commands for root: $TB2_DIR/bin/<slurm command> runs the root's command (chroot, cwd /tmp).
write_clients() {
  local c
  install -d -m 755 "$TB2_DIR/bin"
  for c in "${TB2_CLIENTS[@]}"; do
    cat >"$TB2_DIR/bin/$c" <<EOF
#!/bin/sh
# Slurm 24.11's $c of the rv testbed's cluster 2 (testbed/up2.sh), for root on the host.
exec chroot $R /usr/bin/env PATH=$TB2_PATH /bin/sh -c 'cd /tmp && exec "\$0" "\$@"' /usr/bin/$c "\$@"
EOF
    chmod 755 "$TB2_DIR/bin/$c"
  done
}

write_env() {
  cat >"$TB2_DIR/env" <<EOF
# rv testbed, cluster 2 (Slurm 24.11): source this file (. $TB2_DIR/env)
export TB_DIR=$TB2_DIR
export TB_HOST=$TB2_HOST
export TB_ROOT=$R
export TB_BIN=$TB2_DIR/bin
export TB_SSH_HOST=127.0.0.1
export TB_SSH_PORT=$TB2_SSH_PORT
export TB_SSH_USER=$TB_SSH_USER
export TB_SSH_KEY=$TB2_DIR/ssh/id_ed25519
export TB_SSH_KNOWN_HOSTS=$TB2_DIR/ssh/known_hosts
export TB_SSH_CONFIG=$TB2_DIR/ssh/config
export TB_ACCOUNTING=1
export TB_CLUSTER=$TB2_CLUSTER
export TB_SLURM_VERSION=$(tb2_chroot sinfo --version | awk '{print $2}')
EOF
  chmod 644 "$TB2_DIR/env"
}

if tb2_is_up; then
  write_clients
  ensure_pyxis_standin "$here" || true # said why; the cluster runs without containers
  tb_ssh_config_add_cluster2
  tb_log "cluster 2 already up ($TB2_DIR); checked in $(tb_since "$t0") s"
  exit 0
fi
any_running() {
  local pidfile
  while read -r pidfile; do tb_pid_alive "$pidfile" && return 0; done < <(tb2_pidfiles)
  return 1
}
if any_running || mountpoint -q "$R/proc" || mountpoint -q "$R$TB2_DIR"; then
  tb_log "cluster 2 partly up: stopping the rest first"
  bash "$here/down2.sh"
fi
tb2_root_ok || build_root

if [[ -e $TB2_DIR && ! -e $TB2_DIR/.rv-testbed ]] && [[ -n $(ls -A "$TB2_DIR") ]]; then
  tb_die "$TB2_DIR exists and is not a testbed dir (no .rv-testbed marker); refusing to wipe it"
fi
rm -rf "$TB2_DIR"
install -d -m 755 "$TB2_DIR" "$TB2_DIR/state" "$TB2_DIR/spool" "$TB2_DIR/log" "$TB2_DIR/jobcomp" "$TB2_DIR/dev"
touch "$TB2_DIR/.rv-testbed"
# The root's own /tmp, fresh every start (jobs and logins land there, not in the host's /tmp).
find "$R/tmp" -mindepth 1 -delete 2>/dev/null || true
chmod 1777 "$R/tmp"
cp /etc/hosts "$R/etc/hosts"
mount_root
ensure_user
start_munge
write_conf
start_mariadb
start_slurmdbd
start_slurm
add_qos
start_sshd
ensure_gpu_standin
ensure_pyxis_standin "$here" || true # said why; the cluster runs without containers
write_clients
write_env
tb_ssh_config_add_cluster2
tb_log "cluster 2 up in $(tb_since "$t0") s: Slurm $(tb2_chroot sinfo --version | awk '{print $2}'), \
$(tb2_chroot sinfo -h -o '%P' | tr '\n' ' ')(env: $TB2_DIR/env, ssh: $TB2_HOST)"
