#!/usr/bin/env bash
# The rv binary's help, version and usage errors (#24 items 10-12), without a cluster: the login
# node is a closed loopback port, so a check that needs no round trip answers 2 and one that
# tries to connect answers 255. ctest sets RV (the rv binary). ~1 s.
set -euo pipefail
: "${RV:?RV must be the path of the rv binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/rv-usage.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export XDG_CONFIG_HOME=$dir/config XDG_STATE_HOME=$dir/state HOME=$dir/home NO_COLOR=1
unset RV_HOST RV_CONFIG RV_ACCOUNT
mkdir -p "$HOME"
closed=127.0.0.1:1
checks=0

fail() {
  printf 'test_usage: FAIL: %s\n' "$1" >&2
  printf '  rc %s; stdout:\n%s\n  stderr:\n%s\n' "$rc" "$out" "$err" >&2
  exit 1
}
run() { # the command's rc, stdout and stderr in rc, out, err
  rc=0
  "$RV" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
  out=$(<"$dir/out")
  err=$(<"$dir/err")
}
expect() { # rc needle-in-stdout-or-stderr what
  [[ $rc == "$1" ]] || fail "$3: exit $rc, not $1"
  [[ "$out$err" == *"$2"* ]] || fail "$3: no '$2'"
  checks=$((checks + 1))
}

# item 11: help and version as commands, usage lines that name the command
run help run
expect 0 $'Usage:\n  rv run [OPTIONS] CMD...' "rv help run"
run help sync push
expect 0 "rv sync push [OPTIONS] [PATH] [REMOTE]" "rv help sync push"
run help rnu
# shellcheck disable=SC2016 # backquotes as rv prints them
expect 2 'did you mean `rv help run`?' "rv help with a typo"
run version
expect 0 "rv 0." "rv version"
# #40 item 5: rv --version says the version, the commit, the build date, the target triple and
# whether Kerberos is there, one line each
run --version
expect 0 "rv 0." "rv --version"
[[ $out =~ ^rv\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [^,\ ]+,\ [A-Za-z]+\ build\) ]] ||
  fail "rv --version: no 'rv VERSION (commit HASH, TYPE build)' first line: $out"
[[ $out != *"(commit unknown,"* ]] || fail "rv --version: the commit is unknown in a build from git: $out"
for want in '^built: [0-9]{4}-[0-9]{2}-[0-9]{2}$' '^target: (x86_64|aarch64)-linux-gnu$' '^linked: (static|dynamic)$' \
  '^kerberos: (yes|no) \(.+\)$'; do
  grep -Eq "$want" <<<"$out" || fail "rv --version: no line matching $want: $out"
  checks=$((checks + 1))
done
run --help
expect 0 $'Start here:\n  init' "rv --help groups the commands"
COLUMNS=50 run up --help
expect 0 "  -g, --gpu N" "rv up --help: placeholders without CLI11's types"
while IFS= read -r line; do
  [[ ${#line} -le 50 || $line == "  \$ "* || $line != *" "*" "* ]] || fail "a line of rv up --help is wider than 50: $line"
done <<<"$out"
# N26: rv ssh --config is the global config file again; the ssh block is --print-config
run ssh --config "$dir/nosuch.json"
expect 2 "config file $dir/nosuch.json (from --config) does not exist" "rv ssh --config FILE"
run ssh --install
expect 2 "--install goes with --print-config" "rv ssh --install alone"

# item 10: a flag after the command is warned about in a dry run too, before any round trip
run --host "$closed" run --dry-run python3 train.py --time 2h
expect 255 "--time comes after the command" "rv run --dry-run CMD --time"
# item 12: -t 2h, --connect-timeout 0s, config checks, sync pull without an argument
run --host "$closed" run -t 2h --dry-run true
expect 2 "did you mean --time 2h?" "rv run -t 2h"
run --host "$closed" --connect-timeout 0s exec true
expect 2 "connect_timeout '0s' must be longer than 0" "--connect-timeout 0s"
run config set notify_webhook ftp://x
expect 2 "notify_webhook 'ftp://x' is not an http(s) URL" "config set notify_webhook ftp://x"
run config set notify_email notanemail
expect 2 "is not an e-mail address" "config set notify_email notanemail"
mkdir -p "$XDG_CONFIG_HOME/rv"
printf '{"host": 5}\n' >"$XDG_CONFIG_HOME/rv/config.json"
run config show
expect 2 "'host' must be a string, not 5" '{"host": 5}'
rm "$XDG_CONFIG_HOME/rv/config.json"
run sync pull
expect 2 "rv sync pull needs REMOTE" "rv sync pull without an argument"
run --host "$closed" up --gpu abc
expect 2 "--gpu takes a whole number, not 'abc'" "--gpu abc"
run --host "$closed" run --prefer cost -- true
expect 2 "--prefer cost is for a study" "rv run --prefer without --array/--sweep"
run --host "$closed" run --array 0-3 --prefer cheap -- true
expect 2 "--prefer cheap: not time or cost" "rv run --prefer with a wrong word, before any round trip"
run completion zsh
expect 0 "#compdef rv" "rv completion zsh"
if command -v zsh >/dev/null; then
  zsh -n "$dir/out" || fail "the zsh completion does not parse"
fi
printf 'test_usage: PASS (%d checks)\n' "$checks"
