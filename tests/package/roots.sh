#!/usr/bin/env bash
# The foreign systems test_release.sh runs the release binary in. Sourced by it; run directly,
# `bash tests/package/roots.sh bullseye` makes the Debian 11 root once (debootstrap --variant=minbase
# from Debian's mirror, ~2-4 min, mostly downloads; CI can start it beside the build) and keeps it
# in /var/cache/rv-testbed/bullseye, beside cluster 2's Debian 13 root (testbed/lib2.sh).
set -euo pipefail

REL_CACHE=${REL_CACHE:-/var/cache/rv-testbed}
REL_BULLSEYE_ROOT=${REL_BULLSEYE_ROOT:-$REL_CACHE/bullseye}

rel_log() { printf 'roots: %s\n' "$*" >&2; }

# True when the Debian 11 root is complete (the marker is written last).
rel_bullseye_ok() { [[ -f $REL_BULLSEYE_ROOT/.rv-testbed-root && -x $REL_BULLSEYE_ROOT/bin/sh ]]; }

# Makes the Debian 11 root unless it is there; one at a time (flock). Returns 1 with the reason
# on stderr when it cannot (not root, no debootstrap, no mirror).
rel_make_bullseye() {
  rel_bullseye_ok && return 0
  [[ $(id -u) == 0 ]] || { rel_log "making the Debian 11 root needs root"; return 1; }
  command -v debootstrap >/dev/null || { rel_log "debootstrap is not installed (apt-get install debootstrap)"; return 1; }
  install -d -m 755 "$REL_CACHE"
  exec 8>>"$REL_CACHE/bullseye.lock"
  flock -w 900 8 || { rel_log "another debootstrap of $REL_BULLSEYE_ROOT held its lock for 15 minutes"; return 1; }
  if ! rel_bullseye_ok; then
    local tmp=$REL_BULLSEYE_ROOT.building mirror t0=$SECONDS
    # The mirror apt already uses here (as testbed/up2.sh finds it).
    mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* \
      2>/dev/null | grep -oE 'https?://[^ ]+' | head -1 || true)
    rel_log "making the Debian 11 root in $REL_BULLSEYE_ROOT (debootstrap, once)"
    rm -rf "$tmp"
    if ! debootstrap --variant=minbase bullseye "$tmp" ${mirror:+"$mirror"} >"$REL_CACHE/debootstrap-bullseye.log" 2>&1; then
      rel_log "debootstrap failed; see $REL_CACHE/debootstrap-bullseye.log"
      flock -u 8
      return 1
    fi
    rm -rf "$tmp"/var/cache/apt/archives/*.deb
    touch "$tmp/.rv-testbed-root"
    rm -rf "$REL_BULLSEYE_ROOT"
    mv "$tmp" "$REL_BULLSEYE_ROOT"
    rel_log "Debian 11 root made in $((SECONDS - t0)) s"
  fi
  flock -u 8
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  case ${1:-} in
    bullseye) rel_make_bullseye ;;
    *)
      echo "usage: roots.sh bullseye" >&2
      exit 2
      ;;
  esac
fi
