#!/usr/bin/env bash
# From a fresh Debian 12 (as root) to rv running its main job through the loopback login node:
# install the build and testbed packages, build rv (the binary alone: scripts/test.sh builds the
# test targets) into build/, start the testbed (left running),
# then rv's main job over ssh: `rv exec sinfo`, the plan of a 2-GPU request (`rv up --dry-run`), and
# `rv run -f python3 hello.py` from examples/hello (synced, snapshotted, run; its output printed).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || { rv_log "error: run as root (apt-get, testbed daemons)"; exit 1; }
# shellcheck disable=SC2119  # no packages beyond rv's own
rv_install_deps
rv_build rv
rv_testbed_up
# shellcheck source=/dev/null
. "$TB_DIR/env"
rv_log "testbed is up (stop it with: bash testbed/down.sh)"
cd "$RV_ROOT"
rv=(build/cli/rv --ssh-config "$TB_SSH_CONFIG" --host rvtb)
"${rv[@]}" exec sinfo
echo
"${rv[@]}" up --dry-run --gpu 2 --time 3h
echo
# Smart execution: the script is a local file, so rv syncs examples/hello to the cluster, freezes a
# snapshot for the job, runs it there from the same directory and streams its output.
(cd examples/hello && "../../${rv[0]}" "${rv[@]:1}" run -f --gpu 1 --time 5m python3 hello.py)
