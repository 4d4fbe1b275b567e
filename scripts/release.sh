#!/usr/bin/env bash
# The release tarball: a static rv that runs on any x86_64 or aarch64 Linux (kernel 3.2+, any or no glibc),
# with its man page, bash/zsh/fish completions, a README and the licences of the code inside.
#
#   bash scripts/release.sh [CMAKE_ARG...]  ->  dist/rv-<version>-linux-x86_64.tar.gz and .sha256
#   RV_RELEASE_ARCH=aarch64 bash scripts/release.sh  ->  dist/rv-<version>-linux-aarch64.tar.gz
#   RV_RELEASE_ARCH=all bash scripts/release.sh      ->  both, one after the other (CI builds them
#                                                       in two lanes at once: docs/testing.md)
#   bash scripts/release.sh --source  ->  dist/rv-<version>.tar.gz and .sha256 (the commit's source,
#       what the Homebrew formula builds) and dist/rv.rb (packaging/homebrew/rv.rb with the
#       tarball's URL, RV_RELEASE_URL/rv-<version>.tar.gz (default file://DIST), its SHA-256 and
#       RV_RELEASE_HOMEPAGE (default RV_RELEASE_URL) filled in)
#
# CMAKE_ARGs go to the first configure, e.g. -DRV_LIBSSH_A=/path/libssh.a to link another libssh
# (LICENSES says why that matters).
# Needs Debian 12's build packages (scripts/lib.sh) with libssl-dev and zlib1g-dev, whose static
# libssh.a, libcrypto.a and libz.a go inside (cmake/RvStatic.cmake). Builds into build-release/
# (RV_RELEASE_BUILD_DIR), writes into dist/ (RV_DIST_DIR). The packaging is deterministic: the
# build date and every file's time are the commit's (SOURCE_DATE_EPOCH), owners are 0.
# What the binary is and is not (Kerberos, name services): docs/install.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# RV_RELEASE_ARCH=aarch64: cross-built with Debian's g++-aarch64-linux-gnu and the arm64 -dev
# packages (cmake/toolchains/aarch64-linux-gnu.cmake), in build-release-aarch64/.
want_arch=${RV_RELEASE_ARCH:-$(uname -m)}
if [[ $want_arch == all ]]; then
  if [[ -n ${RV_RELEASE_BUILD_DIR:-} ]]; then
    printf 'release: error: RV_RELEASE_ARCH=all builds in two directories: RV_RELEASE_BUILD_DIR names one\n' >&2
    printf 'release: hint: unset RV_RELEASE_BUILD_DIR, or build each architecture on its own\n' >&2
    exit 2
  fi
  for a in "$(uname -m)" aarch64; do
    RV_RELEASE_ARCH=$a bash "${BASH_SOURCE[0]}" "$@" || exit
  done
  exit 0
fi
case $want_arch in
  "$(uname -m)")
    build=${RV_RELEASE_BUILD_DIR:-$root/build-release}
    cross=() strip=strip multiarch=$(uname -m)-linux-gnu dpkg_arch=:$(dpkg --print-architecture) toolchain_suffix=""
    ;;
  aarch64)
    build=${RV_RELEASE_BUILD_DIR:-$root/build-release-aarch64}
    cross=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake")
    strip=aarch64-linux-gnu-strip multiarch=aarch64-linux-gnu dpkg_arch=:arm64 toolchain_suffix=-arm64-cross
    ;;
  *) printf 'release: error: no release for %s (x86_64, aarch64 or all)\n' "$want_arch" >&2 && exit 2 ;;
esac
dist=${RV_DIST_DIR:-$root/dist}
log() { printf 'release: %s\n' "$*" >&2; }
die() {
  printf 'release: error: %s\n' "$1" >&2
  [[ -z ${2:-} ]] || printf 'release: hint: %s\n' "$2" >&2
  exit 1
}

# --source: the source tarball of HEAD (git archive: the commit's files and times, nothing
# untracked) with .rv-commit (what `rv --version` names without .git, cmake/RvVersion.cmake),
# and the Homebrew formula that builds it.
if [[ ${1:-} == --source ]]; then
  if ! git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
    die "--source needs the git checkout (git and $root/.git)"
  fi
  version=$(sed -n 's/^project(rv VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
  [[ -n $version ]] || die "no version in CMakeLists.txt's project()"
  [[ -z $(git -C "$root" status --porcelain --untracked-files=no) ]] ||
    log "warning: the working tree has uncommitted changes: the tarball holds HEAD ($(git -C "$root" rev-parse --short HEAD)) without them"
  name=rv-$version
  install -d "$dist"
  extra=$(mktemp -d)
  trap 'rm -rf "$extra"' EXIT
  git -C "$root" describe --always --abbrev=10 >"$extra/.rv-commit"
  git -C "$root" archive --format=tar --prefix="$name/" --add-file="$extra/.rv-commit" HEAD |
    gzip -9 -n >"$dist/$name.tar.gz.tmp"
  mv "$dist/$name.tar.gz.tmp" "$dist/$name.tar.gz"
  (cd "$dist" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  sha=$(cut -d' ' -f1 "$dist/$name.tar.gz.sha256")
  url=${RV_RELEASE_URL:-file://$dist}/$name.tar.gz
  sed -e "s|@URL@|$url|" -e "s|@SHA256@|$sha|" -e "s|@HOMEPAGE@|${RV_RELEASE_HOMEPAGE:-${url%/*}}|" \
    "$root/packaging/homebrew/rv.rb" >"$dist/rv.rb"
  log "$dist/$name.tar.gz: $(du -k "$dist/$name.tar.gz" | cut -f1) KiB; $dist/rv.rb builds it from $url"
  cat "$dist/$name.tar.gz.sha256"
  exit 0
fi

for lib in libssh.a libcrypto.a libz.a; do
  [[ -f /usr/lib/$multiarch/$lib ]] ||
    die "/usr/lib/$multiarch/$lib is not installed" "apt-get install libssh-dev$dpkg_arch (it brings libssl-dev and zlib1g-dev)"
done
for tool in cmake ninja "$strip" readelf sha256sum tar gzip; do
  command -v "$tool" >/dev/null || die "$tool is not installed" "bash scripts/bootstrap.sh installs the build packages"
done

version=$(sed -n 's/^project(rv VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
[[ -n $version ]] || die "no version in CMakeLists.txt's project()"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

# One release build at a time per build directory (CI may start one early, beside the tests, and
# package.release runs this script again: the second waits, then finds nothing to build).
install -d "$build"
exec 7>>"$build/.release.lock"
flock 7
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DRV_STATIC=ON -DBUILD_TESTING=OFF -DCMAKE_UNITY_BUILD="${RV_UNITY:-ON}" "${cross[@]}" "$@" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; die "cmake could not configure $build"; }
  rm -f "$build/configure.log"
fi
grep -q '^RV_STATIC:BOOL=ON' "$build/CMakeCache.txt" ||
  die "$build is not a static build (RV_STATIC=OFF)" "remove $build, or set RV_RELEASE_BUILD_DIR to a new directory"
t0=$SECONDS
cmake --build "$build" --parallel "${RV_BUILD_JOBS:-$(nproc)}" --target rv rv_docs
log "built in $((SECONDS - t0)) s"

bin=$build/cli/rv
case $(readelf -h "$bin" | sed -n 's/^ *Machine: *//p') in
  *X86-64*) arch=x86_64 ;;
  *AArch64*) arch=aarch64 ;;
  *) die "unknown machine of $bin: $(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')" ;;
esac
[[ $arch == "$want_arch" ]] || die "$bin is for $arch, not $want_arch" "remove $build and run again"
# Nothing but the kernel: no interpreter, no shared library.
if readelf -l "$bin" | grep -q 'INTERP' || readelf -d "$bin" 2>/dev/null | grep -q '(NEEDED)'; then
  die "$bin is not static: $(readelf -d "$bin" | grep NEEDED | tr -s ' ' | paste -sd';')"
fi

name=rv-$version-linux-$arch
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/$name
install -d "$top/man/man1" "$top/completions" "$top/licenses"
"$strip" -o "$top/rv" "$bin"
chmod 755 "$top/rv"
install -m 644 "$build/share/rv.1" "$top/man/man1/rv.1"
install -m 644 "$build/share/rv.bash" "$top/completions/rv.bash"
install -m 644 "$build/share/rv.zsh" "$top/completions/_rv"
install -m 644 "$build/share/rv.fish" "$top/completions/rv.fish"

commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" -e "s/@NAME@/$name/g" "$root/scripts/release/README.in" >"$top/README"

# LICENSES: each library inside, its version (the Debian package it came from) and licence, then
# what LGPL-2.1 asks of a static binary. licenses/ holds Debian's copyright file of each package
# and the full licence texts they refer to.
pkg_version() { dpkg-query -W -f='${Version}\n' "$1" 2>/dev/null | head -n 1 | grep . || echo "?"; }
{
  sed -e "s/@VERSION@/$version/g" -e "s/@COMMIT@/$commit/g" "$root/scripts/release/LICENSES.in"
  printf '\n%-18s %-44s %-37s %s\n' "library" "version (Debian package)" "licence" "copyright file"
  # KIND: lib (the target's -dev package, :arm64 when cross-built), toolchain (the compiler's
  # own: libc6-dev-arm64-cross ...), all (architecture-independent headers).
  while IFS='|' read -r lib pkg kind licence; do
    case $kind in
      lib) pkg+=$dpkg_arch ;;
      toolchain) pkg+=$toolchain_suffix ;;
    esac
    printf '%-18s %-44s %-37s %s\n' "$lib" "$(pkg_version "$pkg") (${pkg%:*})" "$licence" "licenses/${pkg%:*}.copyright"
    install -m 644 "/usr/share/doc/${pkg%:*}/copyright" "$top/licenses/${pkg%:*}.copyright"
  done <<'EOF'
libssh|libssh-dev|lib|LGPL-2.1-or-later
OpenSSL libcrypto|libssl-dev|lib|Apache-2.0
zlib|zlib1g-dev|lib|Zlib
GNU C Library|libc6-dev|toolchain|LGPL-2.1-or-later (and others)
GNU libstdc++|libstdc++-12-dev|toolchain|GPL-3.0 + GCC Runtime Exception 3.1
libgcc|libgcc-12-dev|toolchain|GPL-3.0 + GCC Runtime Exception 3.1
fmt|libfmt-dev|lib|MIT
spdlog|libspdlog-dev|lib|MIT
nlohmann/json|nlohmann-json3-dev|all|MIT
CLI11|libcli11-dev|all|BSD-3-Clause
toml++|libtomlplusplus-dev|all|MIT
EOF
} >"$top/LICENSES"
for text in LGPL-2.1 GPL-3 Apache-2.0; do
  install -m 644 "/usr/share/common-licenses/$text" "$top/licenses/$text"
done

# Deterministic: fixed order, owners and times; gzip without a name or time.
install -d "$dist"
tarball=$dist/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$stage" -cf - "$name" |
  gzip -9 -n >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
(cd "$dist" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
log "$tarball: $(du -k "$tarball" | cut -f1) KiB; rv $(du -k "$top/rv" | cut -f1) KiB stripped" \
  "($(du -k "$bin" | cut -f1) KiB unstripped)"
cat "$dist/$name.tar.gz.sha256"
