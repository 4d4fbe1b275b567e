#!/usr/bin/env bash
# Cluster strings reach the terminal only through core/printable (docs/architecture.md): in the
# commands that print what the login node or Slurm said (rv init's steps and accounts, rv forward's
# node names, rv ssh's config block, rv ps's table), every std::fputs prints a string literal or
# something that went through printable(). A terminal escape in a node name or an account stays text.
# Usage: printable.sh [SOURCE_ROOT]   (exit 0: the rule holds; 1: violations, one line each)
#        printable.sh --self-test      (plants a raw fputs in a copy and expects a failure)
set -euo pipefail

files=(cli/cmd_init.cpp cli/cmd_forward.cpp cli/cmd_ssh.cpp cli/cmd_ps.cpp)
# The files that write the server's text to the terminal (/dev/tty) themselves: every write_all
# there writes a literal, or text made by a function that escapes it (printable(), or the
# *_text() helpers built on it). A keyboard-interactive banner cannot retitle or clear the screen.
tty_files=(core/ssh/kbdint.cpp)

check() {
  local root=$1 bad=0 f
  for f in "${files[@]}"; do
    [[ -f $root/$f ]] || continue
    # Each fputs call, joined over its lines up to the closing ");".
    while IFS= read -r call; do
      [[ $call == *'std::fputs("'* || $call == *'printable('* ]] && continue
      printf '%s: std::fputs of text that did not go through printable(): %s\n' "$f" "$call"
      bad=1
    done < <(awk '/std::fputs\(/ { c = $0; while (c !~ /\);/ && (getline l) > 0) c = c " " l; gsub(/[ \t]+/, " ", c); print c }' "$root/$f")
  done
  for f in "${tty_files[@]}"; do
    [[ -f $root/$f ]] || continue
    while IFS= read -r call; do
      [[ $call == *'write_all(fd, "'* || $call == *'printable('* || $call =~ write_all\(fd,\ [a-z_]+_text\( ]] && continue
      printf '%s: a terminal write of text that did not go through printable(): %s\n' "$f" "$call"
      bad=1
    done < <(awk '/write_all\(fd,/ { c = $0; while (c !~ /\);/ && (getline l) > 0) c = c " " l; gsub(/[ \t]+/, " ", c); print c }' "$root/$f")
  done
  return $bad
}

if [[ ${1:-} == --self-test ]]; then
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/cli" "$tmp/core/ssh"
  for f in "${files[@]}" "${tty_files[@]}"; do cp "$here/$f" "$tmp/$f"; done
  check "$tmp" >/dev/null || { echo "self-test: the tree itself fails" >&2; exit 1; }
  printf 'void planted() { std::fputs(node.c_str(), stdout); }\n' >>"$tmp/cli/cmd_forward.cpp"
  if check "$tmp" >/dev/null; then
    echo "self-test: a raw fputs was not caught" >&2
    exit 1
  fi
  cp "$here/cli/cmd_forward.cpp" "$tmp/cli/cmd_forward.cpp"
  printf 'void planted(int fd) { write_all(fd, prompt.text); }\n' >>"$tmp/core/ssh/kbdint.cpp"
  if check "$tmp" >/dev/null; then
    echo "self-test: a raw terminal write was not caught" >&2
    exit 1
  fi
  echo "self-test: ok"
  exit 0
fi
check "${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
