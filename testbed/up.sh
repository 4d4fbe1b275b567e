#!/usr/bin/env bash
# Start the loopback Slurm 22.05 testbed: munged, MariaDB + slurmdbd (TB_ACCOUNTING=1, default),
# slurmctld, one `slurmd -N` per simulated node, and an sshd login node on 127.0.0.1:2222.
# Idempotent: when everything already runs it only rewrites $TB_DIR/env and returns.
# Env: TB_DIR (default /tmp/rv-testbed), TB_ACCOUNTING (1|0), TB_INSTALL=1 to apt-get the packages.
# `up.sh --clusters 2` then starts the Slurm 24.11 cluster beside it (up2.sh; never restarts this one).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=testbed/lib.sh
. "$here/lib.sh"
# shellcheck source=testbed/sshd_2fa.sh
. "$here/sshd_2fa.sh"
# shellcheck source=testbed/sshd_net.sh
. "$here/sshd_net.sh"
# shellcheck source=testbed/sshd_gss.sh
. "$here/sshd_gss.sh"
# shellcheck source=testbed/lib2.sh
. "$here/lib2.sh" # where cluster 2's root (the container images' source) lives
# shellcheck source=testbed/containers.sh
. "$here/containers.sh"

t0=$(tb_now)
[[ $(id -u) == 0 ]] || tb_die "up.sh must run as root"
tb_close_inherited_fds
# --clusters 2: also the second cluster (Slurm 24.11, testbed/up2.sh) once this one is up.
clusters=1
while (($#)); do
  case $1 in
    --clusters) clusters=${2:-} && shift 2 ;;
    --clusters=*) clusters=${1#*=} && shift ;;
    *) tb_die "unknown argument: $1 (usage: up.sh [--clusters 1|2])" ;;
  esac
done
[[ $clusters == 1 || $clusters == 2 ]] || tb_die "--clusters takes 1 or 2"
cluster2() { ((clusters == 1)) || exec bash "$here/up2.sh"; }

all_idle() {
  tb_pid_alive "$TB_DIR/slurmctld.pid" || tb_die "slurmctld died; see $TB_DIR/log/slurmctld.log"
  local states
  states=$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  [[ $(grep -c ' idle$' <<<"$states") -eq ${#TB_NODES[@]} ]]
}

any_running() {
  local pidfile
  while read -r pidfile; do
    tb_pid_alive "$pidfile" && return 0
  done < <(tb_pidfiles)
  return 1
}

write_slurm_conf() {
  local line name part gtype weight acct_tres=gres/gpu
  local -A part_nodes=() part_weight=()
  local parts=()
  for line in "${TB_NODES[@]}"; do
    IFS='|' read -r name part _ _ _ _ _ gtype _ weight <<<"$line"
    [[ -n ${part_nodes[$part]:-} ]] || parts+=("$part")
    part_nodes[$part]+="${part_nodes[$part]:+,}$name"
    part_weight[$part]=$weight
    [[ -z $gtype || "$acct_tres," == *",gres/gpu:$gtype,"* ]] || acct_tres+=",gres/gpu:$gtype"
  done
  {
    tb_conf_common testbed/up.sh "$TB_CLUSTER" "$TB_DIR" 6817 6818
    cat <<EOF
PriorityType=priority/basic
GresTypes=gpu
DefMemPerCPU=1000
ReturnToService=2
KillWait=5
MinJobAge=600
MessageTimeout=10
SlurmdTimeout=60
JobCompType=jobcomp/filetxt
JobCompLoc=$TB_DIR/jobcomp/jobcomp.log
EOF
    if [[ $TB_ACCOUNTING == 1 ]]; then
      cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageTRES=$acct_tres
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
EOF
    else
      printf '%s\n' AccountingStorageType=accounting_storage/none JobAcctGatherType=jobacct_gather/none
    fi
    tb_conf_node_lines "${TB_NODES[@]}"
    for part in "${parts[@]}"; do
      printf 'PartitionName=%s Nodes=%s MaxTime=2-00:00:00 DefaultTime=01:00:00 State=UP' "$part" "${part_nodes[$part]}"
      if [[ -z ${part_weight[$part]} ]]; then
        printf ' Default=YES'
      elif [[ $TB_ACCOUNTING == 1 ]]; then
        # GRES weights need AccountingStorageTRES=gres/gpu, which needs slurmdbd.
        printf ' TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=%s"' "${part_weight[$part]}"
      else
        printf ' TRESBillingWeights="CPU=1.0,Mem=0.25G"'
      fi
      printf '\n'
    done
  } >"$TB_ETC/slurm.conf.new"
  mv "$TB_ETC/slurm.conf.new" "$TB_ETC/slurm.conf"
  chmod 644 "$TB_ETC/slurm.conf"

  tb_gres_conf "$TB_DIR" "${TB_NODES[@]}" >"$TB_ETC/gres.conf"
  chmod 644 "$TB_ETC/gres.conf"
}

start_munge() {
  install -d -o munge -g munge -m 0755 /run/munge "$TB_DIR/munge"
  [[ -s /etc/munge/munge.key ]] || runuser -u munge -- mungekey -c -k /etc/munge/munge.key -b 1024
  if [[ -S /run/munge/munge.socket.2 ]] && munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    tb_log "munged: already running (not ours; reused, down.sh leaves it alone)"
    return
  fi
  runuser -u munge -- /usr/sbin/munged --pid-file="$TB_DIR/munge/munged.pid" --log-file="$TB_DIR/munge/munged.log"
  tb_wait 10 tb_pid_alive "$TB_DIR/munge/munged.pid" || tb_die "munged did not start; see $TB_DIR/munge/munged.log"
  munge -n </dev/null | unmunge >/dev/null || tb_die "munge self-test failed"
}

start_mariadb() { tb_start_mariadb "$TB_DIR" "$TB_DB_PORT"; }

start_slurmdbd() {
  umask 077
  tb_slurmdbd_conf "$TB_DIR" 6819 "$TB_DB_PORT" >"$TB_ETC/slurmdbd.conf"
  umask 022
  chmod 600 "$TB_ETC/slurmdbd.conf"
  slurmdbd
  tb_wait 20 tb_pid_alive "$TB_DIR/slurmdbd.pid" || tb_die "slurmdbd did not start; see $TB_DIR/log/slurmdbd.log"
  tb_wait 20 sacctmgr -n list cluster >/dev/null 2>&1 || tb_die "slurmdbd does not answer; see $TB_DIR/log/slurmdbd.log"
  # Before slurmctld connects: adding associations later logs "Can't find parent id".
  sacctmgr -i add cluster "$TB_CLUSTER" >/dev/null
  sacctmgr -i add account "$TB_ACCOUNT" Cluster="$TB_CLUSTER" Description=rvtest Organization=rv >/dev/null
  sacctmgr -i add user "root,$TB_SSH_USER" Account="$TB_ACCOUNT" DefaultAccount="$TB_ACCOUNT" >/dev/null
}

start_slurm() {
  local n
  slurmctld
  tb_wait 20 tb_pid_alive "$TB_DIR/slurmctld.pid" || tb_die "slurmctld did not start; see $TB_DIR/log/slurmctld.log"
  while read -r n; do
    mkdir -p "$TB_DIR/spool/$n"
    slurmd -N "$n"
  done < <(tb_node_names)
  tb_wait 90 all_idle || {
    sinfo -N >&2 || true
    tb_die "nodes not idle after 90 s; see $TB_DIR/log/"
  }
  # slurmctld fchmods it to 0644 on start; `sacct -c` as a user opens it for writing.
  [[ ! -e $TB_DIR/jobcomp/jobcomp.log ]] || chmod 666 "$TB_DIR/jobcomp/jobcomp.log"
}

# Before sacctmgr: slurmdbd resolves the uid when the user is added; a user created later gets
# jobs with Account=(null) and no sacct records under rvacct.
ensure_user() {
  if ! id "$TB_SSH_USER" >/dev/null 2>&1; then
    useradd -m -d "/home/$TB_SSH_USER" -s /bin/bash "$TB_SSH_USER"
  fi
  # useradd's '!' password means "locked": sshd (UsePAM no) then refuses even key logins.
  usermod -p '*' "$TB_SSH_USER"
  local home
  home=$(getent passwd "$TB_SSH_USER" | cut -d: -f6)
  [[ $home == "/home/$TB_SSH_USER" ]] || tb_die "$TB_SSH_USER's home is $home, expected /home/$TB_SSH_USER"
  install -d -o "$TB_SSH_USER" -g "$TB_SSH_USER" -m 755 "$home"
}

install_user_key() {
  local home=/home/$TB_SSH_USER
  install -d -o "$TB_SSH_USER" -g "$TB_SSH_USER" -m 700 "$home/.ssh"
  install -o "$TB_SSH_USER" -g "$TB_SSH_USER" -m 600 "$TB_DIR/ssh/id_ed25519.pub" "$home/.ssh/authorized_keys"
}

start_sshd() {
  local s=$TB_DIR/ssh
  install -d -m 700 "$s"
  [[ -s $s/ssh_host_ed25519_key ]] || ssh-keygen -q -t ed25519 -N '' -C rv-testbed-host -f "$s/ssh_host_ed25519_key"
  [[ -s $s/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C rv-testbed -f "$s/id_ed25519"
  chmod 755 "$s" # rv runs as other users in tests too; the private key itself stays 0600
  install_user_key
  {
    printf '[127.0.0.1]:%s %s\n' "$TB_SSH_PORT" "$(cat "$s/ssh_host_ed25519_key.pub")"
    printf '[localhost]:%s %s\n' "$TB_SSH_PORT" "$(cat "$s/ssh_host_ed25519_key.pub")"
  } >"$s/known_hosts"
  tb_sshd_config "$TB_DIR" "$TB_SSH_PORT" >"$s/sshd_config"
  {
    echo "# OpenSSH client config for the rv testbed login node: ssh -F $s/config rvtb"
    tb_ssh_host rvtb "$TB_DIR" "$TB_SSH_PORT"
  } >"$s/config"
  install -d -m 0755 /run/sshd
  /usr/sbin/sshd -t -f "$s/sshd_config"
  /usr/sbin/sshd -f "$s/sshd_config" -E "$TB_DIR/log/sshd.log"
  tb_wait 10 tb_pid_alive "$TB_DIR/sshd.pid" || tb_die "sshd did not start; see $TB_DIR/log/sshd.log"
  tb_ssh_config_add_cluster2 # rvtb2, when cluster 2 runs
}

# The stand-in nvidia-smi (testbed/nvidia-smi) for the fake GPUs: per-node state in $TB_DIR/gpu/<node>/
# and the tool on every job's PATH (/usr/local/bin). Idempotent; runs also when the testbed is up.
# Left alone where a real nvidia-smi is installed.
ensure_gpu_standin() {
  tb_gpu_state "$TB_DIR/gpu" "${TB_NODES[@]}"
  install -d -m 755 "$TB_DIR/bin"
  sed "s|^TB_DIR=.*|TB_DIR=\${TB_DIR:-$TB_DIR}|" "$here/nvidia-smi" >"$TB_DIR/bin/nvidia-smi.new"
  chmod 755 "$TB_DIR/bin/nvidia-smi.new"
  mv "$TB_DIR/bin/nvidia-smi.new" "$TB_DIR/bin/nvidia-smi"
  local link=/usr/local/bin/nvidia-smi
  if [[ -e $link && ! -L $link ]] || { [[ -L $link ]] && [[ $(readlink "$link") != */bin/nvidia-smi ]]; }; then
    tb_log "a real nvidia-smi is installed at $link: the stand-in stays in $TB_DIR/bin only"
    return
  fi
  ln -sfn "$TB_DIR/bin/nvidia-smi" "$link"
}

write_env() {
  cat >"$TB_DIR/env.new" <<EOF
# rv testbed: source this file (. $TB_DIR/env)
export TB_DIR=$TB_DIR
export TB_HOST=rvtb
export TB_SSH_HOST=127.0.0.1
export TB_SSH_PORT=$TB_SSH_PORT
export TB_SSH_USER=$TB_SSH_USER
export TB_SSH_KEY=$TB_DIR/ssh/id_ed25519
export TB_SSH_KNOWN_HOSTS=$TB_DIR/ssh/known_hosts
export TB_SSH_CONFIG=$TB_DIR/ssh/config
export TB_2FA_PORT=$TB_2FA_PORT
export TB_2FA_HOST=rvtb-2fa
export TB_TOTP=$TB_DIR/bin/totp
export TB_CA_PORT=$TB_CA_PORT
export TB_CA_HOST=rvtb-ca
export TB_CA_DIR=$TB_DIR/ca
export TB_BASTION_PORT=$TB_BASTION_PORT
export TB_BASTION2_PORT=$TB_BASTION2_PORT
export TB_JUMP_HOST=rvtb-jump
export TB_JUMP2_HOST=rvtb-jump2
export TB_WAN_PORT=$TB_WAN_PORT
export TB_WAN_HOST=rvtb-wan
export TB_WAN=$TB_DIR/bin/wan
export TB_GSS_PORT=$TB_GSS_PORT
export TB_GSS_HOST=rvtb-gss
export TB_KRB5_CONFIG=$TB_DIR/krb5/krb5.conf
export TB_KRB5_USER_KEYTAB=$TB_DIR/krb5/rvtest.keytab
export TB_ACCOUNTING=$TB_ACCOUNTING
export TB_CLUSTER=$TB_CLUSTER
EOF
  chmod 644 "$TB_DIR/env.new"
  mv "$TB_DIR/env.new" "$TB_DIR/env"
}

if [[ ${TB_INSTALL:-0} == 1 ]]; then
  mapfile -t pkgs < <(tb_packages)
  tb_log "installing packages: ${pkgs[*]}"
  tb_apt_install "${pkgs[@]}"
fi

if tb_is_up; then
  ensure_gpu_standin
  ensure_apptainer_standin "$here"
  ensure_2fa_sshd
  ensure_net_modes
  ensure_gss_sshd
  write_env
  tb_log "already up ($TB_DIR); checked in $(tb_since "$t0") s"
  cluster2
  exit 0
fi
if any_running; then
  tb_log "partly up: stopping the rest first"
  bash "$here/down.sh"
fi

for cmd in munged slurmctld slurmd sinfo sshd; do
  command -v "$cmd" >/dev/null || [[ -x /usr/sbin/$cmd ]] || tb_die "$cmd not installed; run with TB_INSTALL=1"
done
[[ -d $TB_ETC ]] || tb_die "$TB_ETC missing; run with TB_INSTALL=1"

# Fresh state every start: job ids begin at 1 and no old jobs come back.
if [[ -e $TB_DIR && ! -e $TB_DIR/.rv-testbed ]] && [[ -n $(ls -A "$TB_DIR") ]]; then
  tb_die "$TB_DIR exists and is not a testbed dir (no .rv-testbed marker); refusing to wipe it"
fi
rm -rf "$TB_DIR"
install -d -m 755 "$TB_DIR" "$TB_DIR/state" "$TB_DIR/spool" "$TB_DIR/log" "$TB_DIR/jobcomp" "$TB_DIR/dev"
touch "$TB_DIR/.rv-testbed"

ensure_user
start_munge
write_slurm_conf
if [[ $TB_ACCOUNTING == 1 ]]; then
  start_mariadb
  start_slurmdbd
fi
start_slurm
start_sshd
ensure_2fa_sshd
ensure_net_modes
ensure_gss_sshd
ensure_gpu_standin
ensure_apptainer_standin "$here"
write_env
tb_log "up in $(tb_since "$t0") s: $(sinfo -h -o '%P' | tr '\n' ' ')(env: $TB_DIR/env)"
cluster2
