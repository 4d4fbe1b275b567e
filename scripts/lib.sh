# shellcheck shell=bash
# Shared functions for scripts/bootstrap.sh, scripts/test.sh and .ci/run (sourced, not run).
# Everything targets a Debian 12 machine where we are root; only Debian's mirror is needed.

RV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RV_BUILD_DIR=${RV_BUILD_DIR:-$RV_ROOT/build}
export TB_DIR=${TB_DIR:-/tmp/rv-testbed}
# shellcheck source=testbed/lib.sh
. "$RV_ROOT/testbed/lib.sh"

RV_BUILD_PACKAGES=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev libspdlog-dev
  libssh-dev libtomlplusplus-dev doctest-dev shellcheck rsync git jq python3 dpkg-dev fish tcsh zsh clang-format-16 tmux)
# libtomlplusplus-dev: task files (rv.toml), used header-only;
# jq: integration tests read --json output; python3: bench/ttg; dpkg-dev: dpkg-shlibdeps for the package test;
# clang-format-16: the lint.format test (tests/lint/format.sh);
# fish, tcsh, zsh: commands must reach the job intact whatever the login shell, and the completions load
# tmux: the integration tests drive rv up, rv ssh and Ctrl-C on a real pseudo-terminal (test_up_pty.sh)

# The fuzz targets (scripts/fuzz.sh) need clang 16 and its libFuzzer runtime; CI runs them briefly.
RV_FUZZ_PACKAGES=(clang-16 libclang-rt-16-dev)
# The clang + libc++ lane (scripts/libcxx.sh; docs/portability.md) and the Homebrew formula's
# syntax check (ruby -c, tests/package/test_homebrew.sh).
RV_LIBCXX_PACKAGES=(clang-16 libc++-16-dev libc++abi-16-dev ruby)

# The aarch64 lane (scripts/ci_aarch64.sh): the cross compiler, the arm64 -dev packages of what the
# static rv links (multiarch: rv_install_deps adds the architecture), and qemu to run the result.
# fmt and spdlog are header-only in the static rv, but their CMake configs are per architecture.
# shellcheck disable=SC2034  # used by .ci/run
RV_AARCH64_PACKAGES=(g++-aarch64-linux-gnu libssh-dev:arm64 libssl-dev:arm64 zlib1g-dev:arm64 libfmt-dev:arm64
  libspdlog-dev:arm64 qemu-user-static)

rv_log() { printf 'rv-scripts: %s\n' "$*" >&2; }

# Every package rv needs to build, test and run its testbed.
rv_packages() {
  printf '%s\n' "${RV_BUILD_PACKAGES[@]}"
  tb_packages
}

# apt-get install the build and testbed packages (always: bootstrap is for fresh machines), and
# any further packages named, in the same apt-get call. A package of another architecture
# (libssh-dev:arm64) adds that architecture to dpkg first (rv_multiarch_prepare).
rv_install_deps() {
  local pkgs t0
  mapfile -t pkgs < <(rv_packages)
  pkgs+=("$@")
  t0=$(tb_now)
  local -a native=()
  mapfile -t native < <(rv_multiarch_prepare "${pkgs[@]}") || return 1
  pkgs+=("${native[@]}")
  rv_log "apt-get install ${#pkgs[@]} packages (and their dependencies)"
  tb_apt_install "${pkgs[@]}"
  rv_log "packages installed in $(tb_since "$t0") s"
}

# rv_multiarch_prepare PKG...: for the packages named with a foreign architecture (NAME:arm64),
# add that architecture to dpkg and read its package lists, then print the native packages that
# must be installed with them. A Multi-Arch: same library (libssl3, libssl-dev ...) must have the
# same version in every architecture; the arm64 copy apt installs is the newest (Debian-Security's),
# so the native copy already installed, when older, has to move to that version in the same apt
# call. apt's resolver often does that by itself, but not always (on this project's machine
# libssl-dev had to be upgraded by hand to match libssl-dev:arm64); naming each such native package
# makes it so every time, whatever the machine's image holds. A plan that would
# remove a package is refused: it would take something rv's build or testbed needs.
rv_multiarch_prepare() {
  local native pkg arch added=0
  native=$(dpkg --print-architecture)
  for pkg in "$@"; do
    [[ $pkg == *:* ]] || continue
    arch=${pkg##*:}
    [[ $arch != "$native" ]] || continue
    if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
      rv_log "dpkg --add-architecture $arch (for $pkg)"
      dpkg --add-architecture "$arch"
      added=1
    fi
  done
  # Nothing foreign asked for: nothing to pin.
  printf '%s\n' "$@" | grep -q ':' || return 0
  if ((added == 1)) || [[ -n ${RV_MULTIARCH_UPDATE:-} ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >&2 || return 1
  fi
  local plan
  plan=$(DEBIAN_FRONTEND=noninteractive apt-get install -s --no-install-recommends "$@" </dev/null 2>&1) || {
    printf '%s\n' "$plan" | tail -n 20 >&2
    rv_log "error: apt cannot install the packages asked for (above)"
    rv_log "hint: apt-get update, then apt-get install -s ${*} shows why"
    return 1
  }
  if grep -q '^Remv ' <<<"$plan"; then
    rv_log "error: installing ${*} would remove: $(sed -n 's/^Remv \([^ ]*\).*/\1/p' <<<"$plan" | paste -sd' ')"
    rv_log "hint: apt-get install -s ${*} shows the plan; remove or upgrade those packages first"
    return 1
  fi
  # Every foreign package the plan installs whose native copy is installed: named natively.
  local name
  while read -r name; do
    [[ -n $name ]] || continue
    if [[ $(dpkg-query -W -f '${db:Status-Status}' "$name:$native" 2>/dev/null) == installed ]]; then
      printf '%s:%s\n' "$name" "$native"
    fi
  done < <(sed -n 's/^Inst \([^ :]*\):[a-z0-9]* .*/\1/p' <<<"$plan" | sort -u)
}

# Install only when something is missing: a second test run does not touch apt at all.
rv_install_deps_if_needed() {
  local pkgs
  mapfile -t pkgs < <(rv_packages)
  if tb_installed "${pkgs[@]}"; then
    return 0
  fi
  rv_install_deps
}

# rv_build [TARGET...]: configure (once) and build the targets (default: everything) into
# $RV_BUILD_DIR. Optimised, with line tables only (-g1):
# backtraces and perf keep file:line, and the 2-core build takes about 30 % less time than with
# full debug info (-g: app/run/launch/submit.cpp 9.4 s of CPU, -g1 5.9 s; a Debug build is for the debugger).
# A unity build of rv's libraries (8 sources per compiler run; the tests stay file by file): a
# fresh build, the README's first command and CI's, takes about a third of the CPU time
# (docs/testing.md, "Build time"). RV_UNITY=OFF configures a file-by-file build, for a developer who changes a
# file and rebuilds often (and the libc++ lane, which so checks each file's own includes).
RV_UNITY=${RV_UNITY:-ON}
rv_build() {
  local t0
  t0=$(tb_now)
  if [[ ! -f $RV_BUILD_DIR/build.ninja ]]; then
    cmake -S "$RV_ROOT" -B "$RV_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_UNITY_BUILD="$RV_UNITY"
  fi
  cmake --build "$RV_BUILD_DIR" ${1:+--target "$@"}
  rv_log "built ${*:-everything} in $(tb_since "$t0") s"
}

# What the integration tests run (the rv binary and the template renderer): scripts/test.sh starts
# them as soon as these are built and builds the rest (unit tests, package) beside them.
# shellcheck disable=SC2034  # used by the scripts that source this file
RV_INTEGRATION_TARGETS=(rv rv_render_template)

# Bring the testbed up unless it already runs. Sets RV_STARTED_TESTBED=1 when this call started it.
RV_STARTED_TESTBED=0
rv_testbed_up() {
  if tb_is_up; then
    rv_log "testbed already up in $TB_DIR: using it as is"
    return 0
  fi
  RV_STARTED_TESTBED=1
  bash "$RV_ROOT/testbed/up.sh"
}

# The second cluster (Slurm 24.11, testbed/up2.sh) for the integration24.* tests, unless it
# already runs; builds its Debian 13 root the first time (cached in /var/cache/rv-testbed).
# RV_CLUSTERS=1 leaves it out (the integration24.* tests then skip, or fail under CI=true).
RV_STARTED_TESTBED2=0
rv_testbed2_up() {
  [[ ${RV_CLUSTERS:-2} == 2 ]] || return 0
  # shellcheck source=testbed/lib2.sh
  . "$RV_ROOT/testbed/lib2.sh"
  if tb2_is_up; then
    rv_log "testbed cluster 2 already up in $TB2_DIR: using it as is"
    return 0
  fi
  RV_STARTED_TESTBED2=1
  bash "$RV_ROOT/testbed/up2.sh"
}

# Stop the testbed only if rv_testbed_up started it (someone else's testbed stays up); the same
# for cluster 2.
rv_testbed_down_if_started() {
  if ((RV_STARTED_TESTBED2 == 1)); then
    bash "$RV_ROOT/testbed/down2.sh"
  fi
  if ((RV_STARTED_TESTBED == 1)); then
    bash "$RV_ROOT/testbed/down.sh"
  fi
}
