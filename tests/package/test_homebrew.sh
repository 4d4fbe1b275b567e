#!/usr/bin/env bash
# The Homebrew formula (packaging/homebrew/rv.rb) and the source tarball it builds (issue #40):
# `scripts/release.sh --source` writes rv-<version>.tar.gz, its .sha256 and the formula filled in;
# checked here: the tarball holds exactly the commit's files and .rv-commit, the filled formula
# names that tarball and its SHA-256, both formulas are valid Ruby, every library CMakeLists.txt
# finds is a dependency of the formula, and the unpacked tarball configures with CMake and names its
# commit for `rv --version`. No Mac runs it (docs/portability.md).
# Usage: test_homebrew.sh   (exit 125: SKIP when ruby or git is missing, a failure under CI=true)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# A test that cannot run here is a SKIP, and under CI=true a failure (CI installs ruby: .ci/run).
skip() {
  [[ ${CI:-} != true ]] || { echo "FAIL (CI=true, so not skipped): $*" >&2; exit 1; }
  echo "SKIP: $*"
  exit 125
}
for tool in ruby git cmake; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install $tool)"
done
git -C "$src" rev-parse HEAD >/dev/null 2>&1 || skip "$src is not a git checkout"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

version=$(sed -n 's/^project(rv VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
url_base=https://example.invalid/rv/releases
RV_DIST_DIR=$tmp/dist RV_RELEASE_URL=$url_base bash "$src/scripts/release.sh" --source >"$tmp/release.log" 2>&1 ||
  { cat "$tmp/release.log"; fail "release.sh --source"; }
tarball=$tmp/dist/rv-$version.tar.gz
formula=$tmp/dist/rv.rb
[[ -f $tarball && -f $tarball.sha256 && -f $formula ]] || fail "release.sh --source wrote $(ls "$tmp/dist")"
sha=$(sha256sum "$tarball" | cut -d' ' -f1)
[[ $(cat "$tarball.sha256") == "$sha  rv-$version.tar.gz" ]] || fail "the .sha256 file: $(cat "$tarball.sha256")"
ok "rv-$version.tar.gz ($(du -k "$tarball" | cut -f1) KiB), sha256 $sha"

# The formula names that tarball, its hash, and nothing left to fill in.
grep -qx "  url \"$url_base/rv-$version.tar.gz\"" "$formula" || fail "the formula's url: $(grep -m1 ' url ' "$formula")"
grep -qx "  sha256 \"$sha\"" "$formula" || fail "the formula's sha256: $(grep -m1 ' sha256 ' "$formula")"
! grep -n '@[A-Z0-9]*@' "$formula" || fail "the filled formula still has a placeholder"
for f in "$src/packaging/homebrew/rv.rb" "$formula"; do
  ruby -c "$f" >/dev/null || fail "ruby -c $f"
done
ok "the formula names the tarball and its SHA-256; ruby -c: Syntax OK (template and filled)"

# Exactly the commit's files, under rv-<version>/, and .rv-commit.
tar -tzf "$tarball" | grep -v '/$' | sed "s|^rv-$version/||" | sort >"$tmp/in-tarball"
{ git -C "$src" ls-tree -r --name-only HEAD; echo .rv-commit; } | sort >"$tmp/in-commit"
diff "$tmp/in-commit" "$tmp/in-tarball" >"$tmp/diff" || { head -20 "$tmp/diff"; fail "the tarball's files are not HEAD's"; }
tar -xzf "$tarball" -C "$tmp"
tree=$tmp/rv-$version
want_commit=$(git -C "$src" describe --always --abbrev=10 HEAD)
[[ $(cat "$tree/.rv-commit") == "$want_commit" ]] || fail ".rv-commit is '$(cat "$tree/.rv-commit")', not $want_commit"
ok "the tarball holds HEAD's $(wc -l <"$tmp/in-commit") files and .rv-commit ($want_commit)"

# Every library rv's CMakeLists.txt finds (but the unit tests', off in the formula) is a Homebrew
# dependency of the formula. A new find_package needs a line here and one in the formula.
declare -A brew_name=([CLI11]=cli11 [fmt]=fmt [spdlog]=spdlog [nlohmann_json]=nlohmann-json [libssh]=libssh
  [tomlplusplus]=tomlplusplus [Threads]=- [doctest]=-)
while read -r pkg; do
  [[ -n ${brew_name[$pkg]+x} ]] || fail "CMakeLists.txt finds $pkg: add its Homebrew name to packaging/homebrew/rv.rb and to this test"
  [[ ${brew_name[$pkg]} == - ]] && continue
  grep -qE "^  depends_on \"${brew_name[$pkg]}\"" "$src/packaging/homebrew/rv.rb" ||
    fail "CMakeLists.txt finds $pkg, but the formula does not depend on ${brew_name[$pkg]}"
done < <(grep -rhoE 'find_package\([A-Za-z0-9_]+' "$src/CMakeLists.txt" "$src"/*/CMakeLists.txt "$src"/cmake/*.cmake |
  sed 's/find_package(//' | sort -u)
# toml++ is found by its header (find_path: Debian's CMake config forces its shared library).
if grep -q 'toml++/toml.h' "$src/CMakeLists.txt"; then
  grep -qE '^  depends_on "tomlplusplus"' "$src/packaging/homebrew/rv.rb" ||
    fail "CMakeLists.txt uses toml++, but the formula does not depend on tomlplusplus"
fi
ok "every find_package of CMakeLists.txt (and toml++'s find_path) is a depends_on of the formula"

# What Homebrew's build does first, from the unpacked tarball: configure (Linux's packages stand in
# for Homebrew's), and the commit `rv --version` will name.
cmake -S "$tree" -B "$tmp/build" -G Ninja -DBUILD_TESTING=OFF -DRV_WARNINGS_AS_ERRORS=OFF >"$tmp/configure.log" 2>&1 ||
  { tail -20 "$tmp/configure.log"; fail "cmake cannot configure the unpacked source tarball"; }
cmake -DSRC="$tree" -DOUT="$tmp/rv_commit.hpp" -P "$tree/cmake/RvVersion.cmake"
grep -q "#define RV_COMMIT \"$want_commit\"" "$tmp/rv_commit.hpp" || fail "rv --version's commit from the tarball: $(cat "$tmp/rv_commit.hpp")"
ok "the unpacked tarball configures; rv --version will say commit $want_commit"
