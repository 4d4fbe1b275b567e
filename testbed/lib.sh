# shellcheck shell=bash
# Shared settings and helpers for up.sh, down.sh, smoke.sh and capture.sh (sourced, not run).
# Facts behind every choice here: /work/shared/reference/slurm-testbed.md and docs/testbed.md.

# shellcheck disable=SC2034  # the settings are used by the scripts that source this file
TB_DIR=${TB_DIR:-/tmp/rv-testbed}
TB_ACCOUNTING=${TB_ACCOUNTING:-1}
TB_CLUSTER=rvtest
TB_SSH_PORT=2222
TB_2FA_PORT=2223 # the second-factor sshd (testbed/sshd_2fa.sh)
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
      */slurmdbd.pid | */mysqld.pid) [[ $acct == 1 ]] || continue ;;
    esac
    tb_pid_alive "$pidfile" || return 1
  done < <(tb_pidfiles)
  munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 || return 1
  tb_nodes_ok
}
