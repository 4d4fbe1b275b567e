# shellcheck shell=bash
# Shared settings and helpers for up.sh, down.sh, smoke.sh and capture.sh, and for the tests and
# benches that write ssh configs on top of the testbed's (sourced, not run).
# Facts behind every choice here: /work/shared/reference/slurm-testbed.md and docs/testbed.md.

# shellcheck disable=SC2034  # the settings are used by the scripts that source this file
TB_DIR=${TB_DIR:-/tmp/rv-testbed}
TB_ACCOUNTING=${TB_ACCOUNTING:-1}
TB_CLUSTER=rvtest
TB_SSH_PORT=2222
TB_2FA_PORT=2223 # the second-factor sshd (testbed/sshd_2fa.sh)
# The network modes (testbed/sshd_net.sh): certificate login node, two bastions, the WAN proxy.
TB_CA_PORT=2225
TB_BASTION_PORT=2226
TB_BASTION2_PORT=2227
TB_WAN_PORT=2228
TB_SSH_USER=rvtest
TB_ACCOUNT=rvacct
TB_DB_PORT=3307
TB_ETC=/etc/slurm
# Simulated nodes: name|partition|slurmd port|CPUs|sockets|cores per socket|MiB|gpu type|gpus|billing/GPU
TB_NODES=(
  "a100-1|gpu-a100|17001|64|2|32|512000|a100|8|509"
  "a100-2|gpu-a100|17002|64|2|32|512000|a100|8|509"
  "a6000-1|gpu-a6000|17003|32|2|16|256000|a6000|8|200"
  "v100-1|gpu-v100|17004|32|2|16|192000|v100|4|150"
  "h200-1|gpu-h200|17005|96|2|48|1024000|h200|4|1000"
  "mig-1|gpu-mig|17006|16|1|16|128000|a100_1g.10gb|7|70"
  "cpu-1|cpu|17007|8|1|8|32000|||"
)

# Debian packages the testbed needs (the accounting ones only with TB_ACCOUNTING=1).
tb_packages() {
  local pkgs=(munge slurmctld slurmd slurm-client openssh-server procps) # procps: ps, pgrep
  # The login node's side of rv's sync (rsync; SFTP comes with openssh-server) and of its
  # dependency installs (python3 -m venv + pip from Debian's bundled wheels; no internet needed).
  pkgs+=(rsync python3 python3-venv)
  # The second-factor login node: PAM's TOTP module, and oathtool for the tests' codes.
  pkgs+=(libpam-oath oathtool)
  pkgs+=(debootstrap) # builds cluster 2's Debian 13 root (up2.sh)
  pkgs+=(bubblewrap gcc) # the containers (containers.sh): apptainer's sandbox, the Pyxis stand-in's build
  pkgs+=(krb5-kdc krb5-admin-server krb5-user) # the Kerberos login node (sshd_gss.sh): KDC, kadmin.local, kinit
  if [[ $TB_ACCOUNTING == 1 ]]; then
    pkgs+=(slurmdbd mariadb-server)
  fi
  printf '%s\n' "${pkgs[@]}"
}

tb_node_names() {
  local line
  for line in "${TB_NODES[@]}"; do
    printf '%s\n' "${line%%|*}"
  done
}

tb_log() { printf 'testbed: %s\n' "$*" >&2; }
tb_die() {
  printf 'testbed: error: %s\n' "$*" >&2
  exit 1
}

tb_now() { date +%s.%N; }

# Close every descriptor this shell inherited above stderr (bash's own script descriptor, 255,
# stays). The daemons up.sh starts would otherwise keep them: started under
# `flock /tmp/rv-testbed-up.lock bash testbed/up.sh` (or a test's flock on fd 9), munged, MariaDB
# and slurmdbd held that lock for as long as they ran, and every later up.sh waited on it forever.
tb_close_inherited_fds() {
  local fd n
  for fd in "/proc/$$/fd/"*; do
    n=${fd##*/}
    if ((n > 2 && n != 255)); then
      eval "exec $n>&-" 2>/dev/null || true
    fi
  done
}
tb_since() { awk -v a="$1" -v b="$(tb_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Prints the pid in pidfile $1. Daemons delete their pidfile as they exit, so it may vanish at any
# moment: `read` instead of $(<file), whose failure exits the script even inside `if` or `||`.
tb_pid_of() {
  local pid=""
  { read -r pid <"$1"; } 2>/dev/null || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  printf '%s\n' "$pid"
}

# True when the pid in pidfile $1 is a live (non-zombie) process.
tb_pid_alive() {
  local pid state
  pid=$(tb_pid_of "$1") || return 1
  state=$(ps -o stat= -p "$pid" 2>/dev/null) || return 1
  [[ $state != Z* ]]
}

tb_pid_gone() { ! tb_pid_alive "$1"; }

# Every pidfile the testbed owns, in stop order (login node first, munge last).
tb_pidfiles() {
  local n
  printf '%s\n' "$TB_DIR/wan-proxy.pid" "$TB_DIR/sshd-bastion.pid" "$TB_DIR/sshd-bastion2.pid" "$TB_DIR/sshd-ca.pid"
  printf '%s\n' "$TB_DIR/sshd-gss.pid" "$TB_DIR/krb5kdc.pid"
  printf '%s\n' "$TB_DIR/sshd-2fa.pid" "$TB_DIR/sshd.pid"
  while read -r n; do printf '%s\n' "$TB_DIR/slurmd-$n.pid"; done < <(tb_node_names)
  printf '%s\n' "$TB_DIR/slurmctld.pid" "$TB_DIR/slurmdbd.pid" "$TB_DIR/db/mysqld.pid" "$TB_DIR/munge/munged.pid"
}

# Poll `cmd...` every 0.2 s until it succeeds or $1 seconds pass.
tb_wait() {
  local timeout=$1 start
  shift
  start=$SECONDS
  until "$@"; do
    ((SECONDS - start < timeout)) || return 1
    sleep 0.2
  done
}

# apt-get install packages on Debian 12 without starting their system services.
tb_apt_install() {
  local created_policy=0 manflag=/var/lib/man-db/auto-update
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    # Keeps the maintainer scripts from starting the system's own munge/slurm/mariadb/ssh services.
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    created_policy=1
  fi
  # The man-db trigger costs ~5 s per install and nothing here reads man pages.
  if [[ -e $manflag ]]; then mv "$manflag" "$manflag.rv-off"; fi
  local rc=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  } </dev/null || rc=$?
  if [[ -e $manflag.rv-off ]]; then mv "$manflag.rv-off" "$manflag"; fi
  ((created_policy == 0)) || rm -f /usr/sbin/policy-rc.d
  return "$rc"
}

# True when every package named is installed.
tb_installed() {
  local status
  status=$(dpkg-query -W -f '${db:Status-Status}\n' "$@" 2>/dev/null) || return 1
  ! grep -qv '^installed$' <<<"$status"
}

# Every node registered and answering: none down, drained, invalid, unknown or not responding.
tb_nodes_ok() {
  local states
  states=$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  [[ $(wc -l <<<"$states") -eq ${#TB_NODES[@]} ]] || return 1
  ! grep -Eq ' (down|drain|drng|inval|unk|fail|maint|npc|plnd)|\*' <<<"$states"
}

# True when the testbed in $TB_DIR runs: every daemon of ours alive, munge works, nodes answer
# (idle or busy with someone's jobs).
tb_is_up() {
  local pidfile acct=$TB_ACCOUNTING
  [[ -f $TB_DIR/env ]] || return 1
  grep -q '^export TB_ACCOUNTING=1$' "$TB_DIR/env" && acct=1 || acct=0 # the running mode wins
  while read -r pidfile; do
    case $pidfile in
      */munged.pid) [[ -e $pidfile ]] || continue ;; # a munged we reused is not ours
      */sshd-2fa.pid) continue ;; # added beside a running testbed by up.sh (ensure_2fa_sshd)
      */sshd-ca.pid | */sshd-bastion*.pid | */wan-proxy.pid) continue ;; # likewise (ensure_net_modes)
      */sshd-gss.pid | */krb5kdc.pid) continue ;; # likewise (ensure_gss_sshd; none without krb5-kdc)
      */slurmdbd.pid | */mysqld.pid) [[ $acct == 1 ]] || continue ;;
    esac
    tb_pid_alive "$pidfile" || return 1
  done < <(tb_pidfiles)
  munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 || return 1
  tb_nodes_ok
}

tb_gpu_model() { # gpu type -> name|memory.total MiB|MIG profile
  case $1 in
    a100) echo "NVIDIA A100-SXM4-80GB|81920|" ;;
    a6000) echo "NVIDIA RTX A6000|49140|" ;;
    v100) echo "Tesla V100-SXM2-32GB|32768|" ;;
    h200) echo "NVIDIA H200|143771|" ;;
    h100) echo "NVIDIA H100 80GB HBM3|81559|" ;;
    l40s) echo "NVIDIA L40S|46068|" ;;
    a100_*) echo "NVIDIA A100-SXM4-80GB|81920|${1#a100_}" ;;
    h100_*) echo "NVIDIA H100 80GB HBM3|81559|${1#h100_}" ;;
    *) echo "NVIDIA $1|16384|" ;;
  esac
}

# tb_gpu_state DIR NODE-LINE...: the stand-in's per-node state DIR/<node>/gpus for the GPU nodes
# among the node lines (TB_NODES' format), unless already written.
tb_gpu_state() {
  local dir=$1 line name gtype gcount model gname total mig i uuid
  shift
  for line in "$@"; do
    IFS='|' read -r name _ _ _ _ _ _ gtype gcount _ <<<"$line"
    [[ -n $gtype ]] || continue
    install -d -m 777 "$dir/$name"
    [[ -s $dir/$name/gpus ]] && continue
    model=$(tb_gpu_model "$gtype")
    IFS='|' read -r gname total mig <<<"$model"
    {
      if [[ -n $mig ]]; then # MIG: one physical GPU, its instances are Slurm's GPUs
        uuid=$(printf '%s-0' "$name" | md5sum | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/GPU-\1-\2-\3-\4-\5/')
        printf '0|%s|%s|%s|00000000:07:00.0|%s|%s\n' "$gname" "$uuid" "$total" "$mig" "$gcount"
      else
        for ((i = 0; i < gcount; i++)); do
          uuid=$(printf '%s-%s' "$name" "$i" | md5sum | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/GPU-\1-\2-\3-\4-\5/')
          printf '%s|%s|%s|%s|00000000:%02X:00.0||0\n' "$i" "$gname" "$uuid" "$total" $((0x07 + 16 * i))
        done
      fi
    } >"$dir/$name/gpus"
    chmod 644 "$dir/$name/gpus"
  done
}

# Cluster 2's Host block (testbed/up2.sh, rvtb2) in cluster 1's ssh config, so that $TB_SSH_CONFIG
# names both login nodes; removed when cluster 2 is down. Called by up.sh, up2.sh and down2.sh.
tb_ssh_config_add_cluster2() {
  local config=$TB_DIR/ssh/config block=${TB2_DIR:-/tmp/rv-testbed2}/ssh/config
  [[ -f $config ]] || return 0
  sed -i '/^# >>> cluster 2/,/^# <<< cluster 2/d' "$config"
  [[ -f $block && -f ${block%/ssh/config}/env ]] || return 0
  { echo "# >>> cluster 2 (testbed/up2.sh)"; grep -v '^#' "$block"; echo "# <<< cluster 2"; } >>"$config"
}

# tb_stepds ROOT: the slurmstepd pids whose root directory is ROOT ("/": this cluster's; cluster 2's
# run in its Debian 13 root and carry the same process name, so `pgrep -x` alone mixes them up).
tb_stepds() {
  local p
  for p in $(pgrep -x slurmstepd || true); do
    [[ $(readlink "/proc/$p/root" 2>/dev/null) != "$1" ]] || printf '%s\n' "$p"
  done
}

# --- the pieces both clusters' up scripts write (up.sh: 22.05 on the host; up2.sh: 24.11 in its root)

# tb_conf_common GENERATOR CLUSTER DIR CTLD_PORT SLURMD_PORT: slurm.conf's lines up to the scheduler
# (paths under DIR, munge, process tracking without cgroups, config_overrides for fake hardware).
tb_conf_common() {
  cat <<EOF
# Generated by rv $1; overwritten on every fresh start.
ClusterName=$2
SlurmctldHost=localhost
SlurmUser=root
SlurmctldPort=$4
SlurmdPort=$5
AuthType=auth/munge
CredType=cred/munge
MailProg=/bin/true
StateSaveLocation=$3/state
SlurmdSpoolDir=$3/spool/%n
SlurmctldPidFile=$3/slurmctld.pid
SlurmdPidFile=$3/slurmd-%n.pid
SlurmctldLogFile=$3/log/slurmctld.log
SlurmdLogFile=$3/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=2,bf_resolution=60
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
EOF
}

# tb_conf_node_lines NODE-LINE...: `NodeName=` lines for the node lines (TB_NODES' format); a GPU
# node's Feature is gpu,<type>.
tb_conf_node_lines() {
  local line name port cpus sockets cores mem gtype gcount
  echo "NodeName=DEFAULT State=UNKNOWN ThreadsPerCore=1 Boards=1"
  for line in "$@"; do
    IFS='|' read -r name _ port cpus sockets cores mem gtype gcount _ <<<"$line"
    printf 'NodeName=%s NodeHostname=localhost NodeAddr=127.0.0.1 Port=%s CPUs=%s SocketsPerBoard=%s CoresPerSocket=%s RealMemory=%s' \
      "$name" "$port" "$cpus" "$sockets" "$cores" "$mem"
    [[ -z $gtype ]] || printf ' Gres=gpu:%s:%s Feature=gpu,%s' "$gtype" "$gcount" "$gtype"
    printf '\n'
  done
}

# tb_gres_conf DIR NODE-LINE...: gres.conf for the GPU nodes, each GPU a character device under
# DIR/dev/<node>/ (slurmd drops file-less GPUs; no driver is behind them).
tb_gres_conf() {
  local dir=$1 line name gtype gcount i
  shift
  echo "AutoDetect=off"
  for line in "$@"; do
    IFS='|' read -r name _ _ _ _ _ _ gtype gcount _ <<<"$line"
    [[ -n $gtype ]] || continue
    mkdir -p "$dir/dev/$name"
    for ((i = 0; i < gcount; i++)); do
      [[ -e $dir/dev/$name/nvidia$i ]] || mknod "$dir/dev/$name/nvidia$i" c 195 "$i"
    done
    echo "NodeName=$name Name=gpu Type=$gtype File=$dir/dev/$name/nvidia[0-$((gcount - 1))]"
  done
}

# tb_start_mariadb DIR PORT [RUN...]: a private MariaDB (datadir DIR/db) on 127.0.0.1:PORT with the
# slurm_acct_db and its user; RUN is the prefix that runs a command where the database lives
# (nothing on the host, tb2_chroot for cluster 2).
tb_start_mariadb() {
  local dir=$1 port=$2 uid
  shift 2
  local db=$dir/db sock=$dir/db/mysqld.sock
  uid=$("$@" id -u mysql)
  install -d -o "$uid" -g "$uid" "$db"
  install -d -o "$uid" -g "$uid" -m 700 "$db/data"
  "$@" mariadb-install-db --no-defaults --user=mysql --datadir="$db/data" \
    --auth-root-authentication-method=socket --skip-test-db >"$dir/log/mariadb-install.log" 2>&1 ||
    tb_die "mariadb-install-db failed; see $dir/log/mariadb-install.log"
  # mariadbd drops to user mysql: pid, socket and log must live in the mysql-owned dir.
  "$@" setsid mariadbd --no-defaults --user=mysql --datadir="$db/data" --socket="$sock" \
    --port="$port" --bind-address=127.0.0.1 --pid-file="$db/mysqld.pid" --log-error="$db/mariadb.err" \
    --skip-log-bin --innodb-buffer-pool-size=128M --innodb-log-file-size=64M \
    --innodb-lock-wait-timeout=900 --innodb-flush-log-at-trx-commit=2 </dev/null >/dev/null 2>&1 &
  local start=$SECONDS
  until "$@" mariadb --no-defaults -S "$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    ((SECONDS - start < 30)) || tb_die "MariaDB did not start; see $db/mariadb.err"
    sleep 0.2
  done
  "$@" mariadb --no-defaults -S "$sock" -uroot -e "
    CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmtestpw';
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmtestpw';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
}

# tb_slurmdbd_conf DIR DBD_PORT DB_PORT: slurmdbd.conf's text.
tb_slurmdbd_conf() {
  cat <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$2
SlurmUser=root
DebugLevel=info
LogFile=$1/log/slurmdbd.log
PidFile=$1/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$3
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=slurmtestpw
EOF
}

# tb_sshd_config DIR PORT: the login node's sshd_config (keys in DIR/ssh, user TB_SSH_USER only).
tb_sshd_config() {
  cat <<EOF
Port $2
ListenAddress 127.0.0.1
HostKey $1/ssh/ssh_host_ed25519_key
PidFile $1/sshd.pid
AllowUsers $TB_SSH_USER
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
StrictModes yes
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF
}

# tb_ssh_host HOST DIR PORT: the client config's Host block for a login node.
tb_ssh_host() {
  cat <<EOF
Host $1
  HostName 127.0.0.1
  Port $3
  User $TB_SSH_USER
  IdentityFile $2/ssh/id_ed25519
  UserKnownHostsFile $2/ssh/known_hosts
  IdentitiesOnly yes
  StrictHostKeyChecking yes
  BatchMode yes
EOF
}

# tb_ssh_jump_host HOST JUMP: a Host block for cluster 1's login node reached through ProxyJump
# JUMP (a Host alias or user@host:port), for configs written by tests and benches on top of
# $TB_SSH_CONFIG (test_netpaths.sh, bench/wan.sh).
tb_ssh_jump_host() {
  tb_ssh_host "$1" "$TB_DIR" "$TB_SSH_PORT"
  printf '  ProxyJump %s\n' "$2"
}

# tb_stop_daemons: stops the live daemons of the pidfiles on stdin (SIGTERM, SIGKILL after 10 s; a
# slurmd stuck in its registration back-off ignores SIGTERM), appending their names to TB_STOPPED.
TB_STOPPED=()
tb_stop_daemons() {
  local pidfile pid name
  while read -r pidfile; do
    tb_pid_alive "$pidfile" || continue
    pid=$(tb_pid_of "$pidfile") || continue
    name=$(basename "$pidfile" .pid)
    kill -TERM "$pid" 2>/dev/null || true
    if ! tb_wait 10 tb_pid_gone "$pidfile"; then
      tb_log "$name ($pid) ignored SIGTERM for 10 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      tb_wait 5 tb_pid_gone "$pidfile" || tb_die "$name ($pid) survived SIGKILL"
    fi
    TB_STOPPED+=("$name")
  done
}

# The testbed locks: tb_lock, tb_unlock, tb_lock_holders.
# shellcheck source=testbed/lib_lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_lock.sh"
