#!/usr/bin/env bash
# The release tarball (scripts/release.sh) checked as a user gets it, and its rv run on systems we
# do not build on: the tarball's files, its checksum and licences, a fully static rv (`ldd`: "not a
# dynamic executable"), its size and start time; then, in each root below, `rv --version`, `rv help`,
# `rv help run`, `rv exec hostname` and `rv run -f` of a one-line script against the testbed's
# login node (127.0.0.1:2222, reached by name through the root's own /etc/hosts), and a held
# connection (rv's default) started, used and ended:
#   bullseye  Debian 11 (glibc 2.31), made once with debootstrap (tests/package/roots.sh)
#   trixie    Debian 13 (glibc 2.41), cluster 2's root (testbed/up2.sh)
#   empty     nothing but rv, /etc/passwd, /etc/hosts and an SSH key
#   host      this Debian 12 machine, as a user in no password database (uid 4242: what a user
#             known only to LDAP/SSSD looks like to a static glibc)
# The Debian roots are used through an overlay (their cached files are never written).
#
# Usage: test_release.sh [TARBALL]   (default: run scripts/release.sh, incremental, and test what
# it makes). Exit 0: pass; 1: fail; 125: SKIP, the reason printed: a root that cannot be made or
# no testbed. Under CI=true every root and the testbed must be there: a skip is a failure.
# RV_RELEASE_ARCH=aarch64: the Arm tarball, its rv run under qemu-user-static (below).
# RV_RELEASE_JOBS=0: no `rv run -f` (it submits a job, so the test holds the testbed alone);
# without it the test changes nothing on the cluster and holds the testbed lock shared, beside the
# integration tests (the aarch64 lane, scripts/ci_aarch64.sh). The output says what was left out.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=tests/package/roots.sh
. "$here/roots.sh"

fail() {
  printf 'test_release: FAIL: %s\n' "$1" >&2
  shift
  local line
  for line in "$@"; do printf '  %s\n' "$line" >&2; done
  exit 1
}
ok() { printf 'ok - %s\n' "$*"; }
skipped=()
# skip WHAT REASON: WHAT is not tested here; under CI=true that is a failure.
skip() {
  [[ ${CI:-} != true ]] || fail "$1 cannot be tested: $2 (CI must have it)"
  printf 'test_release: SKIP: %s: %s\n' "$1" "$2" >&2
  skipped+=("$1: $2")
}
if [[ $(id -u) != 0 ]]; then
  [[ ${CI:-} != true ]] || fail "needs root (chroot, overlay mounts)"
  echo "test_release: SKIP: needs root (chroot, overlay mounts)"
  exit 125
fi

work=$(mktemp -d /tmp/rv-release-test.XXXXXX)
mounts=()
cleanup() {
  local rc=$? m
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  if ((rc != 0 && rc != 125)) || [[ ${RV_IT_KEEP:-0} == 1 ]]; then
    echo "test_release: files kept in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# --- the tarball ---------------------------------------------------------------------------------
version=$(sed -n 's/^project(rv VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
# RV_RELEASE_ARCH=aarch64: the Arm tarball, its rv run under qemu-user-static (copied into each
# root; without binfmt_misc the emulator is named on each command line).
arch=${RV_RELEASE_ARCH:-$(uname -m)}
emu=()
if [[ $arch != "$(uname -m)" ]]; then
  qemu=$(command -v "qemu-$arch-static" || true)
  if [[ -z $qemu ]]; then
    [[ ${CI:-} != true ]] || fail "qemu-$arch-static is not installed (apt-get install qemu-user-static)"
    echo "test_release: SKIP: qemu-$arch-static is not installed (apt-get install qemu-user-static)"
    exit 125
  fi
  emu=("$qemu")
fi
tarball=${1:-${RV_RELEASE_TARBALL:-}}
if [[ -z $tarball && $arch != "$(uname -m)" ]] &&
  { ! command -v "$arch-linux-gnu-g++" >/dev/null || [[ ! -f /usr/lib/$arch-linux-gnu/libssh.a ]]; }; then
  why="no cross toolchain for $arch (cmake/toolchains/aarch64-linux-gnu.cmake names the packages)"
  [[ ${CI:-} != true ]] || fail "$why"
  echo "test_release: SKIP: $why"
  exit 125
fi
if [[ -z $tarball ]]; then
  nice -n 10 bash "$src/scripts/release.sh" >"$work/release.log" 2>&1 || {
    tail -n 40 "$work/release.log" >&2
    fail "scripts/release.sh failed"
  }
  tarball=$src/dist/rv-$version-linux-$arch.tar.gz
fi
[[ -f $tarball ]] || fail "no tarball $tarball"
name=$(basename "$tarball" .tar.gz)
[[ $name == "rv-$version-linux-$arch" ]] || fail "tarball name $name is not rv-$version-linux-$arch"
(cd "$(dirname "$tarball")" && sha256sum --quiet -c "$name.tar.gz.sha256") || fail "$name.tar.gz.sha256 does not match"
ok "$name.tar.gz: $(du -k "$tarball" | cut -f1) KiB, its SHA-256 matches"
tar -xzf "$tarball" -C "$work"
pkg=$work/$name
for f in rv man/man1/rv.1 completions/rv.bash completions/_rv completions/rv.fish README LICENSES \
  licenses/libssh-dev.copyright licenses/LGPL-2.1; do
  [[ -s $pkg/$f ]] || fail "the tarball has no $f"
done
grep -qF "install -D -m 755 $name/rv ~/.local/bin/rv" "$pkg/README" || fail "README has no one-line install"
for lib in libssh OpenSSL zlib "GNU C Library" "GNU libstdc++" fmt spdlog nlohmann/json CLI11; do
  grep -q "^$lib " "$pkg/LICENSES" || fail "LICENSES does not name $lib"
done
if ! grep -q 'LGPL-2.1' "$pkg/LICENSES" || ! grep -q 'scripts/release.sh' "$pkg/LICENSES"; then
  fail "LICENSES does not say how to relink against another libssh"
fi
ok "files: rv, man page, 3 completions, README with the install line, LICENSES naming 10 libraries"

rv=$pkg/rv
ldd_out=$(ldd "$rv" 2>&1 || true)
[[ $ldd_out == *"not a dynamic executable"* ]] || fail "ldd rv: $ldd_out"
! readelf -S "$rv" | grep -q '\.debug_info' || fail "rv is not stripped"
size=$(stat -c %s "$rv")
((size <= 20 * 1024 * 1024)) || fail "rv is $size bytes stripped, over 20 MiB"
ok "static (ldd: not a dynamic executable), stripped, $((size / 1024)) KiB"

# Its man page and completions are the ones it generates; the completions load.
export XDG_CONFIG_HOME=$work/cfg
unset RV_HOST RV_CONFIG
cmp -s <("${emu[@]}" "$rv" man) "$pkg/man/man1/rv.1" || fail "man/man1/rv.1 differs from rv man"
cmp -s <("${emu[@]}" "$rv" completion bash) "$pkg/completions/rv.bash" || fail "completions/rv.bash differs"
bash -n "$pkg/completions/rv.bash" || fail "completions/rv.bash: syntax"
if command -v zsh >/dev/null; then zsh -n "$pkg/completions/_rv" || fail "completions/_rv: syntax"; fi
if command -v fish >/dev/null; then fish -n "$pkg/completions/rv.fish" || fail "completions/rv.fish: syntax"; fi
ok "man page and completions match rv's own"

# `rv --help` start time, at most RV_HELP_MS (default 6) ms: the fastest of 30 runs in wall time
# (python3 spawns and times them; a `date` per run would add its own start), or, when the shared
# machine is too busy for that, in CPU time (user + system, which a busy machine inflates little).
read -r wall_us cpu_us < <(python3 -c '
import resource, subprocess, sys, time
wall, cpu = [], []
for _ in range(30):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(sys.argv[1:] + ["--help"], stdout=subprocess.DEVNULL, check=True)
    wall.append(time.perf_counter() - t0)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
print(int(min(wall) * 1e6), int(min(cpu) * 1e6))
' "${emu[@]}" "$rv")
limit_us=$((${RV_HELP_MS:-6} * 1000))
load=$(cut -d' ' -f1 /proc/loadavg)
if ((${#emu[@]})); then
  ok "rv --help under ${emu[0]##*/}: $wall_us us (emulated: not held to ${RV_HELP_MS:-6} ms)"
elif ((wall_us <= limit_us)); then
  ok "rv --help: $wall_us us (fastest of 30; CPU $cpu_us us; load $load)"
elif ((cpu_us <= limit_us)); then
  ok "rv --help: $cpu_us us of CPU (fastest of 30; wall $wall_us us at load $load)"
else
  fail "rv --help took $wall_us us (CPU $cpu_us us) at best, over ${RV_HELP_MS:-6} ms"
fi

# --- the roots -------------------------------------------------------------------------------------
TB_DIR=${TB_DIR:-/tmp/rv-testbed}
have_testbed=1
if [[ ! -f $TB_DIR/env ]]; then
  skip "rv exec and rv run -f in every root" "no testbed ($TB_DIR/env missing; start it with testbed/up.sh)"
  have_testbed=0
else
  # shellcheck source=/dev/null
  . "$TB_DIR/env"
fi

# A Debian root seen through an overlay: writes land in $work/NAME, never in the cache. Sets
# OVERLAY to the mount point (not printed: a command substitution would lose `mounts`).
overlay_root() { # NAME LOWER
  local d=$work/$1
  install -d "$d/upper" "$d/work" "$d/root"
  mount -t overlay overlay -o "lowerdir=$2,upperdir=$d/upper,workdir=$d/work" "$d/root" ||
    fail "cannot mount an overlay of $2"
  mounts+=("$d/root")
  OVERLAY=$d/root
}

# What rv needs in root R for user UID, under the directory T (/rv-test in a chroot): itself, a
# home with the testbed's key and the login node's host key under the name LOGIN, and LOGIN in
# /etc/hosts when it is a name (in the chroots).
furnish() { # ROOT UID T LOGIN
  local r=$1 uid=$2 t=$3 login=$4 home=$1$3/home
  install -d -m 755 "$r$t"
  install -m 755 "$rv" "$r$t/rv"
  ((${#emu[@]} == 0)) || install -m 755 "${emu[0]}" "$r$t/qemu"
  if [[ $login != 127.0.0.1 ]]; then
    install -d "$r/etc"
    printf '127.0.0.1\tlocalhost %s\n' "$login" >"$r/etc/hosts"
  fi
  install -d -m 700 "$home" "$home/.ssh" "$home/project" "$home/run"
  if ((have_testbed)); then
    install -m 600 "$TB_SSH_KEY" "$home/.ssh/id_ed25519"
    # The testbed's host keys as known for [127.0.0.1]:PORT, under the name rv will use.
    awk -v name="$login" '$1 ~ /^\[127\.0\.0\.1\]:/ { sub(/127\.0\.0\.1/, name, $1); print }' \
      "$TB_SSH_KNOWN_HOSTS" >"$home/.ssh/known_hosts"
    grep -q "^\[$login\]:${TB_SSH_PORT:?} " "$home/.ssh/known_hosts" ||
      fail "no host key for [127.0.0.1]:$TB_SSH_PORT in $TB_SSH_KNOWN_HOSTS"
  fi
  # shellcheck disable=SC2016 # expanded by the job
  printf 'echo "rv-release-job on $(hostname) as $(id -un)"\n' >"$home/project/job.sh"
  chown -R "$uid:$uid" "$home"
}

in_root_env=() # more VAR=VALUE for in_root
# in_root ROOT UID T DIR CMD...: CMD in ROOT as UID (no supplementary groups), from DIR, with
# HOME=T/home and nothing else of this machine's environment: python3 does the chroot, chdir and
# setuid, so the empty root needs no program but rv.
in_root() {
  local r=$1 uid=$2 t=$3 dir=$4
  shift 4
  local user=root
  ((uid == 0)) || user=rvrel
  local -a in_root_emu=()
  ((${#emu[@]} == 0)) || in_root_emu=("$t/qemu")
  env -i HOME="$t/home" USER=$user LOGNAME=$user PATH=/usr/bin:/bin XDG_CONFIG_HOME="$t/home/.config" \
    XDG_STATE_HOME="$t/home/.state" XDG_RUNTIME_DIR="$t/home/run" RV_CONNECTION_PERSIST=0 NO_COLOR=1 \
    "${in_root_env[@]}" python3 -c '
import os, sys
root, uid, wd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.chroot(root)
os.chdir(wd)
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
os.execv(sys.argv[4], sys.argv[4:])
' "$r" "$uid" "$dir" "${in_root_emu[@]}" "$@" </dev/null
}

RUN_OUT=""
# must WHAT CMD...: runs CMD; fails the test unless it exits 0. Its stdout in RUN_OUT.
must() {
  local what=$1 rc=0
  shift
  RUN_OUT=$("$@" 2>"$work/err") || rc=$?
  ((rc == 0)) || fail "$what: exit $rc" "stdout: $RUN_OUT" "stderr: $(head -c 3000 "$work/err")"
}

# check_root LABEL ROOT UID KERBEROS [T LOGIN]: the four commands in ROOT as UID; KERBEROS is how
# the Kerberos line of `rv --version` must start there. T: where rv and its home go (/rv-test); LOGIN:
# the login node's name there (rvtb-login, put in the root's /etc/hosts).
check_root() {
  local label=$1 r=$2 uid=$3 krb=$4 t=${5:-/rv-test} login=${6:-rvtb-login}
  furnish "$r" "$uid" "$t" "$login"
  must "$label: rv --version" in_root "$r" "$uid" "$t" / "$t/rv" --version
  [[ $RUN_OUT == "rv $version "* ]] || fail "$label: rv --version" "$RUN_OUT"
  grep -q "^target: $arch-linux-gnu$" <<<"$RUN_OUT" || fail "$label: rv --version has no target line" "$RUN_OUT"
  local kerberos_line
  kerberos_line=$(grep '^kerberos:' <<<"$RUN_OUT" || true)
  [[ $kerberos_line == "kerberos: $krb"* ]] || fail "$label: rv --version: Kerberos should be '$krb...' here" "$RUN_OUT"
  must "$label: rv help" in_root "$r" "$uid" "$t" / "$t/rv" help
  [[ $RUN_OUT == *$'Start here:\n  init'* && $RUN_OUT == *$'\n  run '* ]] || fail "$label: rv help" "$RUN_OUT"
  must "$label: rv help run" in_root "$r" "$uid" "$t" / "$t/rv" help run
  [[ $RUN_OUT == *$'Usage:\n  rv run [OPTIONS] CMD...'* ]] || fail "$label: rv help run" "$RUN_OUT"
  ok "$label: rv --version ($kerberos_line), rv help, rv help run"
  ((have_testbed)) || return 0
  local -a to_login=(--host "$TB_SSH_USER@$login:$TB_SSH_PORT" --ssh-config ''
    -i "$t/home/.ssh/id_ed25519" --known-hosts "$t/home/.ssh/known_hosts")
  must "$label: rv exec hostname" in_root "$r" "$uid" "$t" / "$t/rv" "${to_login[@]}" exec hostname
  [[ $RUN_OUT == "$(hostname)" ]] || fail "$label: rv exec hostname printed '$RUN_OUT', not '$(hostname)'"
  if ((submit_jobs == 0)); then
    ok "$label: rv exec hostname"
    printf 'note - %s\n' "$label: rv run -f NOT run (RV_RELEASE_JOBS=0: no job submitted)"
  else
    must "$label: rv run -f" in_root "$r" "$uid" "$t" "$t/home/project" \
      "$t/rv" "${to_login[@]}" run -f --time 5m --name rv-release-test -- bash job.sh
    [[ $RUN_OUT == *"rv-release-job on "*" as $TB_SSH_USER"* ]] ||
      fail "$label: rv run -f did not print the job's line" "stdout: $RUN_OUT" "stderr: $(head -c 3000 "$work/err")"
    ok "$label: rv exec hostname, rv run -f bash job.sh (the job's line came back)"
  fi
  # rv's default, a held connection (docs/ssh.md): a background rv keeps the login, the next
  # command goes through it, and `rv disconnect --all` ends it.
  if ((${#emu[@]})); then
    # A held connection is a second rv started by the first: without binfmt_misc the kernel cannot
    # run an Arm program, so that is not tested under qemu.
    printf 'note - %s\n' "$label: held connection NOT tested (rv starts itself; under qemu-user that needs binfmt_misc)"
    return 0
  fi
  local -a saved_env=("${in_root_env[@]}")
  in_root_env+=(RV_CONNECTION_PERSIST=1)
  must "$label: rv exec hostname (held connection)" in_root "$r" "$uid" "$t" / "$t/rv" "${to_login[@]}" exec hostname
  [[ $RUN_OUT == "$(hostname)" ]] || fail "$label: rv exec hostname (held) printed '$RUN_OUT'"
  must "$label: rv exec true (through the held connection)" in_root "$r" "$uid" "$t" / "$t/rv" "${to_login[@]}" exec true
  must "$label: rv disconnect --all" in_root "$r" "$uid" "$t" / "$t/rv" disconnect --all
  [[ $RUN_OUT == *"ended 1 held connection"* ]] || fail "$label: rv disconnect --all" "$RUN_OUT"
  in_root_env=("${saved_env[@]}")
  ok "$label: a held connection: started, used, ended by rv disconnect --all"
}

# What `rv --version` says of Kerberos everywhere: the static rv has none (docs/ssh.md).
no_krb="no (this static rv has no Kerberos"

# The login node, held only while the roots use it (shared with the integration tests): alone
# when a job is submitted, else beside the shared ones.
submit_jobs=${RV_RELEASE_JOBS:-1}
if ((have_testbed)); then
  exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
  lock_mode=-x
  ((submit_jobs != 0)) || lock_mode=-s
  flock "$lock_mode" -w 2400 9 || fail "the testbed lock stayed taken for 40 minutes"
fi

# (c) the empty root: rv, /etc/passwd, /etc/hosts, the key; root as in its /etc/passwd.
empty=$work/empty
install -d "$empty/etc"
printf 'root:x:0:0:root:/rv-test/home:/bin/sh\n' >"$empty/etc/passwd"
check_root "empty root" "$empty" 0 "$no_krb"

# (a) Debian 11, glibc 2.31.
if rel_make_bullseye 2>"$work/roots.err"; then
  overlay_root bullseye "$REL_BULLSEYE_ROOT"
  check_root "Debian 11 root (glibc 2.31)" "$OVERLAY" 0 "$no_krb"
else
  skip "the Debian 11 root" "$(tail -n 1 "$work/roots.err")"
fi

# (b) Debian 13, cluster 2's root: the same with glibc 2.41.
# shellcheck source=testbed/lib2.sh disable=SC1091
. "$src/testbed/lib2.sh"
if tb2_root_ok; then
  overlay_root trixie "$TB2_ROOT"
  trixie=$OVERLAY
  check_root "Debian 13 root (glibc 2.41)" "$trixie" 0 "$no_krb"
  # There, GSSAPIAuthentication yes (read through the root's own `ssh -G`) gets one error line
  # and the way out (the static rv has no Kerberos: docs/ssh.md).
  if ((have_testbed)) && [[ -n ${TB_GSS_PORT:-} && -x $trixie/usr/bin/ssh ]]; then
    printf 'Host rvtb-gss\n  HostName rvtb-login\n  Port %s\n  User %s\n  GSSAPIAuthentication yes\n  IdentitiesOnly yes\n  UserKnownHostsFile /rv-test/home/.ssh/known_hosts\n' \
      "$TB_GSS_PORT" "$TB_SSH_USER" >"$trixie/rv-test/home/.ssh/config"
    rc=0
    in_root "$trixie" 0 /rv-test / /rv-test/rv --ssh-config /rv-test/home/.ssh/config --host rvtb-gss exec true \
      >"$work/out" 2>"$work/err" || rc=$?
    if [[ $rc != 254 || $(grep -c '^rv: error:' "$work/err") != 1 ]] ||
      ! grep -q "Kerberos (GSSAPI) cannot be used here" "$work/err" || ! grep -q "^rv: hint: use rv's .deb" "$work/err"; then
      fail "Debian 13 root: GSSAPIAuthentication yes without a usable Kerberos (exit $rc)" "$(cat "$work/err")"
    fi
    ok "Debian 13 root: GSSAPIAuthentication yes: exit 254, one error line, the hint names the .deb"
  fi
else
  skip "the Debian 13 root" "cluster 2's root $TB2_ROOT is not built (testbed/up2.sh builds it)"
fi

# (d) this machine (Debian 12), as uid 4242, in no password database, while /etc/nsswitch.conf
# names more than the files (`passwd: files systemd` here: a static glibc that loaded
# libnss_systemd for it crashed, docs/install.md).
chmod 755 "$work"
# Sync by SFTP: rsync would run this machine's OpenSSH `ssh`, which refuses a uid in no password
# database ("No user exists for uid 4242"); a real LDAP user's ssh finds them through NSS.
in_root_env=(RV_SYNC_TRANSPORT=sftp)
check_root "Debian 12, uid 4242 unknown to NSS" / 4242 "$no_krb" "$work/host" 127.0.0.1
in_root_env=()

exec 9>&-

if ((${#skipped[@]})); then
  printf 'test_release: SKIP (in part): %s\n' "${skipped[@]}"
  exit 125
fi
echo "test_release: ok"
