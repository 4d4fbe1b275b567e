# shellcheck shell=bash
# Shared functions for scripts/bootstrap.sh, scripts/test.sh and .ci/run (sourced, not run).
# Everything targets a Debian 12 machine where we are root; only Debian's mirror is needed.

RV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RV_BUILD_DIR=${RV_BUILD_DIR:-$RV_ROOT/build}
export TB_DIR=${TB_DIR:-/tmp/rv-testbed}
# shellcheck source=testbed/lib.sh
. "$RV_ROOT/testbed/lib.sh"

RV_BUILD_PACKAGES=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev libspdlog-dev
  libssh-dev doctest-dev shellcheck rsync git jq python3 dpkg-dev fish tcsh zsh clang-format-16 tmux)
# jq: integration tests read --json output; python3: bench/ttg; dpkg-dev: dpkg-shlibdeps for the package test;
# clang-format-16: the lint.format test (tests/lint/format.sh);
# fish, tcsh, zsh: commands must reach the job intact whatever the login shell, and the completions load
# tmux: the integration tests drive rv up, rv ssh and Ctrl-C on a real pseudo-terminal (test_up_pty.sh)

# The fuzz targets (scripts/fuzz.sh) need clang 16 and its libFuzzer runtime; CI runs them briefly.
RV_FUZZ_PACKAGES=(clang-16 libclang-rt-16-dev)
# The clang + libc++ lane (scripts/libcxx.sh; docs/portability.md) and the Homebrew formula's
# syntax check (ruby -c, tests/package/test_homebrew.sh).
RV_LIBCXX_PACKAGES=(clang-16 libc++-16-dev libc++abi-16-dev ruby)

rv_log() { printf 'rv-scripts: %s\n' "$*" >&2; }

# Every package rv needs to build, test and run its testbed.
rv_packages() {
  printf '%s\n' "${RV_BUILD_PACKAGES[@]}"
  tb_packages
}

# apt-get install the build and testbed packages (always: bootstrap is for fresh machines), and
# any further packages named, in the same apt-get call.
rv_install_deps() {
  local pkgs t0
  mapfile -t pkgs < <(rv_packages)
  pkgs+=("$@")
  t0=$(tb_now)
  rv_log "apt-get install ${#pkgs[@]} packages (and their dependencies)"
  tb_apt_install "${pkgs[@]}"
  rv_log "packages installed in $(tb_since "$t0") s"
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
# full debug info (-g: app/run/submit.cpp 9.4 s of CPU, -g1 5.9 s; a Debug build is for the debugger).
rv_build() {
  local t0
  t0=$(tb_now)
  if [[ ! -f $RV_BUILD_DIR/build.ninja ]]; then
    cmake -S "$RV_ROOT" -B "$RV_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
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
