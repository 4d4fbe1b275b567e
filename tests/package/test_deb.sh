#!/usr/bin/env bash
# The Debian package, built by CPack from the current build and checked as a user would get it:
# its metadata and dependencies, the files it installs, and the installed rv, man page and
# completions working. Usage: test_deb.sh BUILD_DIR   (exit 125: SKIP when a tool is missing)
set -euo pipefail
build=${1:?usage: test_deb.sh BUILD_DIR}
for tool in cpack dpkg-deb dpkg-shlibdeps readelf; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 125; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(find "$tmp/out" -maxdepth 1 -name 'rv_*.deb' -print -quit)
[[ -n $deb ]] || fail "no rv_*.deb in $tmp/out"
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# Metadata: the version, and dependencies found from the binary's shared libraries.
info=$(dpkg-deb -f "$deb" Package Version Depends Recommends)
echo "$info"
grep -q '^Package: rv$' <<<"$info" || fail "package name"
want_version=$("$build/cli/rv" --version | awk 'NR == 1 {print $2}') # its first line: rv VERSION (commit ...)
grep -q "^Version: $want_version$" <<<"$info" || fail "version is not $want_version"
grep -q '^Depends:.*libssh' <<<"$info" || fail "Depends lacks libssh (dpkg-shlibdeps did not run?)"
grep -q '^Depends:.*libc6' <<<"$info" || fail "Depends lacks libc6"
grep -q '^Recommends:.*rsync' <<<"$info" || fail "Recommends lacks rsync"

# The files, where Debian's tools look for them.
dpkg-deb -x "$deb" "$tmp/root"
for f in usr/bin/rv usr/share/man/man1/rv.1 usr/share/bash-completion/completions/rv \
  usr/share/zsh/vendor-completions/_rv usr/share/fish/vendor_completions.d/rv.fish \
  usr/share/doc/rv/README.md usr/share/doc/rv/docs/sync.md usr/share/doc/rv/examples/profile.example.json; do
  [[ -s $tmp/root/$f ]] || fail "missing or empty: /$f"
done
if readelf -S "$tmp/root/usr/bin/rv" | grep -q '\.debug_info'; then
  fail "the packaged binary is not stripped"
fi
echo "binary: $(du -k "$tmp/root/usr/bin/rv" | cut -f1) KiB stripped"

# The installed rv runs, and its man page and completions are the ones it generates itself.
rv=$tmp/root/usr/bin/rv
export XDG_CONFIG_HOME=$tmp/cfg
unset RV_HOST RV_CONFIG
[[ $("$rv" --version) == "rv $want_version "* ]] || fail "installed rv --version"
cmp -s <("$rv" man) "$tmp/root/usr/share/man/man1/rv.1" || fail "rv.1 differs from rv man"
cmp -s <("$rv" completion bash) "$tmp/root/usr/share/bash-completion/completions/rv" || fail "bash completion differs"
bash -n "$tmp/root/usr/share/bash-completion/completions/rv" || fail "bash completion: syntax"
if command -v zsh >/dev/null; then
  zsh -n "$tmp/root/usr/share/zsh/vendor-completions/_rv" || fail "zsh completion: syntax"
fi
if command -v fish >/dev/null; then
  fish -n "$tmp/root/usr/share/fish/vendor_completions.d/rv.fish" || fail "fish completion: syntax"
fi
if command -v man >/dev/null && command -v groff >/dev/null; then
  MANWIDTH=100 man -l "$tmp/root/usr/share/man/man1/rv.1" 2>"$tmp/man.err" | grep -q 'rv run' || fail "man -l"
  [[ ! -s $tmp/man.err ]] || { cat "$tmp/man.err"; fail "man -l warned"; }
fi
# Every example in `rv --help` names a real command.
help=$("$rv" --help)
while read -r cmd; do
  grep -qE "^  ${cmd}[ ,]" <<<"$help" || fail "example command '$cmd' is not in rv --help"
done < <(sed -n '/^Examples:/,/^$/p' <<<"$help" | awk '$1 == "$" {print $3}' | sort -u)

# apt accepts it: every dependency resolves on this Debian release.
if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
  apt-get install --simulate -q "$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get install --simulate"; }
  grep -q '^Inst rv ' "$tmp/apt.log" || { cat "$tmp/apt.log"; fail "apt would not install rv"; }
fi
echo "package: ok"
