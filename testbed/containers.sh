# shellcheck shell=bash
# The testbed's container runtimes (docs/testbed.md, "Containers"), sourced by up.sh and up2.sh after
# lib.sh and lib2.sh; every function is idempotent and runs on a fresh start and when already up.
#   cluster 1 (22.05): Apptainer, the stand-in testbed/apptainer (+ `singularity`), which runs the
#                      command through bubblewrap in the image's root;
#   cluster 2 (24.11): Pyxis, the SPANK plugin testbed/spank_pyxis.c built against the root's own
#                      spank.h (Debian 13's libslurm-dev) and loaded by srun and
#                      slurmstepd through the root's plugstack.conf.d.
# The images: directories made offline from cluster 2's Debian 13 root (its /etc copied, /usr bound
# read-only at run time) in $TB2_ROOT/var/lib/rv-test-images/{base,nogpu,env}: the same path for both
# runtimes (inside the root it is /var/lib/rv-test-images).

TB_IMAGES_SUB=var/lib/rv-test-images
TB_IMAGE_NAMES=(base nogpu env)
TB_PYXIS_SO=usr/local/lib/rv-testbed/spank_pyxis.so
TB_PYXIS_CONF=etc/slurm/plugstack.conf.d/pyxis.conf

# tb_container_images ROOT: the image roots in ROOT/var/lib/rv-test-images (rebuilt when the stamp,
# a checksum of this recipe, differs). Each holds etc/ (the root's, without the cluster's daemons'
# secrets and configs), etc/rv-image (what a test looks for inside), the usr-merge links and an
# empty usr/; .root is where the Pyxis stand-in builds a task's root (in its own mount namespace).
tb_container_images() {
  local root=$1 dir=$1/$TB_IMAGES_SUB name tmp stamp
  [[ -d $root/etc && -d $root/usr/bin ]] || return 0
  stamp=$(declare -f tb_container_images | sha256sum | cut -c1-16)
  install -d -m 755 "$dir" "$dir/.root"
  # up.sh and up2.sh may both get here at once (CI starts cluster 2 beside cluster 1).
  exec 7>"$dir/.lock"
  flock 7
  for name in "${TB_IMAGE_NAMES[@]}"; do
    [[ $(cat "$dir/$name/.stamp" 2>/dev/null) != "$stamp" ]] || continue
    tmp=$dir/.$name.new
    rm -rf "$tmp"
    install -d -m 755 "$tmp" "$tmp/usr"
    rsync -a --exclude=/slurm --exclude=/munge --exclude='/ssh/ssh_host_*' --exclude=/mysql \
      --exclude=/krb5.keytab "$root/etc/" "$tmp/etc/"
    ln -s usr/bin "$tmp/bin"
    ln -s usr/sbin "$tmp/sbin"
    ln -s usr/lib "$tmp/lib"
    ln -s usr/lib64 "$tmp/lib64"
    printf 'rv-test/%s: the rv testbed'"'"'s image (Debian %s root, testbed/containers.sh)\n' \
      "$name" "$(cat "$root/etc/debian_version")" >"$tmp/etc/rv-image"
    chmod 644 "$tmp/etc/rv-image"
    # The env image's own ENV (a Docker image's `ENV` lines: TGI sets HF_HOME=/data), beside its
    # root as the runtimes keep it apart from the files: both stand-ins apply it (docs/testbed.md).
    if [[ $name == env ]]; then
      printf 'HF_HOME=/data\nHF_TOKEN=image-token\nRV_OUTPUT_DIR=/image-output\n' >"$tmp/rv-image.env"
      chmod 644 "$tmp/rv-image.env"
    fi
    printf '%s\n' "$stamp" >"$tmp/.stamp"
    rm -rf "${dir:?}/$name"
    mv -T "$tmp" "$dir/$name"
  done
  exec 7>&-
}

# tb_container_state DIR NODE-LINE...: DIR/container (the runtimes' logs, world-writable) and the
# GPU state the nogpu image shows instead of the node's: every node's GPUs gone ("No devices were
# found", exit 6, from the stand-in nvidia-smi).
tb_container_state() {
  local dir=$1 line name gtype
  shift
  install -d -m 1777 "$dir/container"
  install -d -m 755 "$dir/container/nogpu/gpu"
  for line in "$@"; do
    IFS='|' read -r name _ _ _ _ _ _ gtype _ _ <<<"$line"
    [[ -n $gtype ]] || continue
    install -d -m 755 "$dir/container/nogpu/gpu/$name"
    [[ -s $dir/gpu/$name/gpus ]] && cp "$dir/gpu/$name/gpus" "$dir/container/nogpu/gpu/$name/gpus"
    echo nodevices >"$dir/container/nogpu/gpu/$name/fault"
  done
  chmod -R a+rX "$dir/container/nogpu"
}

# ensure_apptainer_standin (up.sh, cluster 1): the stand-in in $TB_DIR/bin, linked as apptainer and
# singularity from /usr/local/bin (every job's and the login node's PATH) unless a real one is
# there; its log $TB_DIR/container/apptainer.log; the images if cluster 2's root is built (up2.sh
# builds them otherwise).
ensure_apptainer_standin() {
  local here=$1 c link
  tb_container_state "$TB_DIR" "${TB_NODES[@]}"
  touch "$TB_DIR/container/apptainer.log"
  chmod 666 "$TB_DIR/container/apptainer.log"
  ! tb2_root_ok || tb_container_images "$TB2_ROOT"
  command -v bwrap >/dev/null || tb_log "bwrap (bubblewrap) is not installed: apptainer exec will fail (TB_INSTALL=1 installs it)"
  sed -e "s|^TB_DIR=.*|TB_DIR=\${TB_DIR:-$TB_DIR}|" \
    -e "s|^TB_IMAGES=.*|TB_IMAGES=$TB2_ROOT/$TB_IMAGES_SUB|" \
    -e "s|^TB_IMAGE_USR=.*|TB_IMAGE_USR=$TB2_ROOT/usr|" "$here/apptainer" >"$TB_DIR/bin/apptainer.new"
  chmod 755 "$TB_DIR/bin/apptainer.new"
  mv "$TB_DIR/bin/apptainer.new" "$TB_DIR/bin/apptainer"
  for c in apptainer singularity; do
    link=/usr/local/bin/$c
    if [[ -e $link && ! -L $link ]] || { [[ -L $link ]] && [[ $(readlink "$link") != */bin/apptainer ]]; }; then
      tb_log "a real $c is installed at $link: the stand-in stays in $TB_DIR/bin only"
      continue
    fi
    ln -sfn "$TB_DIR/bin/apptainer" "$link"
  done
}

# tb_apptainer_links_remove (down.sh): the links into $TB_DIR, which down.sh wipes.
tb_apptainer_links_remove() {
  local c
  for c in apptainer singularity; do
    [[ $(readlink "/usr/local/bin/$c" 2>/dev/null) != "$TB_DIR/bin/apptainer" ]] || rm -f "/usr/local/bin/$c"
  done
}

# ensure_pyxis_standin HERE (up2.sh, cluster 2, root mounted): the root's spank.h (Debian 13's
# libslurm-dev, apt-get in the root), the plugin built with the host's gcc against
# it (only when the source or the header changed), plugstack.conf.d/pyxis.conf (`required`, as
# Pyxis is installed), the images, the log. srun reads plugstack.conf on every call and slurmstepd
# on every step: no daemon restarts. A failure is said and returns 1: the cluster runs without it
# (test_container fails on cluster 2; nothing else needs it).
ensure_pyxis_standin() {
  local here=$1 R=$TB2_ROOT so conf inc sum
  so=$R/$TB_PYXIS_SO conf=$R/$TB_PYXIS_CONF
  tb_container_images "$R"
  tb_container_state "$TB2_DIR" "${TB2_NODES[@]}"
  touch "$TB2_DIR/container/pyxis.log"
  chmod 666 "$TB2_DIR/container/pyxis.log"
  if [[ ! -f $R/usr/include/slurm/spank.h ]]; then
    tb_log "cluster 2: installing libslurm-dev in the root (spank.h for the Pyxis stand-in)"
    tb2_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libslurm-dev </dev/null >"$TB2_DIR/log/apt-spank.log" 2>&1 ||
      { tb2_chroot env DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null >>"$TB2_DIR/log/apt-spank.log" 2>&1 &&
        tb2_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
          libslurm-dev </dev/null >>"$TB2_DIR/log/apt-spank.log" 2>&1; } ||
      { tb_log "error: cannot install libslurm-dev in $R (see $TB2_DIR/log/apt-spank.log): no Pyxis stand-in"; return 1; }
  fi
  command -v gcc >/dev/null || { tb_log "error: gcc is missing (it builds the Pyxis stand-in): no Pyxis stand-in"; return 1; }
  sum=$(cat "$here/spank_pyxis.c" "$R/usr/include/slurm/spank.h" "$R/usr/include/slurm/slurm_version.h" | sha256sum | cut -c1-16)
  if [[ $(cat "$so.sum" 2>/dev/null) != "$sum" || ! -f $so ]]; then
    # Only the root's slurm/ headers: the C library's are the host's (the plugin runs on the
    # root's newer glibc, which keeps the old symbol versions).
    inc=$(mktemp -d)
    ln -s "$R/usr/include/slurm" "$inc/slurm"
    install -d -m 755 "${so%/*}"
    gcc -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$inc" -o "$so.new" "$here/spank_pyxis.c" \
      >"$TB2_DIR/log/spank_pyxis-build.log" 2>&1 || {
      rm -rf "$inc"
      tb_log "error: the Pyxis stand-in did not build (see $TB2_DIR/log/spank_pyxis-build.log); the one built before, if any, stays"
      return 1
    }
    rm -rf "$inc"
    mv -f "$so.new" "$so"
    printf '%s\n' "$sum" >"$so.sum"
  fi
  install -d -m 755 "${conf%/*}"
  printf '# The rv testbed'"'"'s Pyxis stand-in (testbed/spank_pyxis.c, testbed/containers.sh)\nrequired /%s images=/%s state=%s nvidia_smi=/usr/local/bin/nvidia-smi log=%s container_scope=job\n' \
    "$TB_PYXIS_SO" "$TB_IMAGES_SUB" "$TB2_DIR" "$TB2_DIR/container/pyxis.log" >"$conf.new"
  chmod 644 "$conf.new"
  if cmp -s "$conf.new" "$conf"; then rm -f "$conf.new"; else mv -f "$conf.new" "$conf"; fi
  # Checked the way rv's discovery looks: srun lists the option. A `required` plugin that does not
  # load fails every srun of the cluster: then it is taken out again, and the cluster runs without.
  if ! tb2_chroot srun --help 2>/dev/null | grep -q -- '--container-image'; then
    rm -f "$conf"
    tb_log "error: cluster 2's srun did not list --container-image with the Pyxis stand-in: removed $conf again"
    return 1
  fi
}
