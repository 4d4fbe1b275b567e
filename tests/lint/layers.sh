#!/usr/bin/env bash
# The dependency rule of docs/architecture.md, checked: each folder may include headers only of
# the folders listed for it, and only the folders that may log include spdlog.
#   cli -> app -> {strategy, templates, slurm, sync} -> core   (a layer may use any layer below it;
#   never one above, never a sibling)
# Inside app/, the tiers (docs/architecture.md): the root (Env, settings) includes only the root;
# app/request/ the root; app/run/ request/ and the root; every other subfolder is one feature and
# includes run/, request/ and the root, never another feature.
# Usage: layers.sh [SOURCE_ROOT]   (exit 0: the rule holds; 1: violations, one line each)
#        layers.sh --self-test      (plants a wrong include in a copy and expects a failure)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# folder: the project folders its files may include (its own is always allowed).
declare -A allowed=(
  [core]=""
  [slurm]="core"
  [strategy]="core"
  [templates]="core"
  [sync]="core"
  [app]="core slurm strategy templates sync"
  [cli]="core slurm strategy templates sync app"
  [bench]="core slurm strategy templates sync app"
  [fuzz]="core slurm strategy templates sync app"
  [tests]="core slurm strategy templates sync app cli fakes fixtures"
)
# Folders whose code may log (spdlog); strategy/ and templates/ return their reasons as data.
may_log=" core slurm sync app cli bench fuzz tests "

check() {
  local root=$1 bad=0 dir file line inc
  for dir in "${!allowed[@]}"; do
    [[ -d $root/$dir ]] || continue
    while IFS=: read -r file line inc; do
      local target=${inc#*\"}
      target=${target%%/*}
      [[ $target == "$dir" ]] && continue
      [[ " ${allowed[$dir]} " == *" $target "* ]] && continue
      [[ -d $root/$target ]] || continue # not a project folder (e.g. "doctest/...")
      printf '%s:%s: %s/ may not include %s/ (allowed: %s)\n' "${file#"$root"/}" "$line" "$dir" "$target" \
        "${allowed[$dir]:-nothing but itself}"
      bad=1
    done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^#include "[A-Za-z_]+/' "$root/$dir" || true)
    if [[ $may_log != *" $dir "* ]]; then
      while IFS=: read -r file line _; do
        printf '%s:%s: %s/ may not log (spdlog); return the reason as data\n' "${file#"$root"/}" "$line" "$dir"
        bad=1
      done < <(grep -rnE --include='*.cpp' --include='*.hpp' '^#include <spdlog/' "$root/$dir" || true)
    fi
  done
  check_app "$root" || bad=1
  check_slurm_words "$root" || bad=1
  return "$bad"
}

# Slurm's vocabulary lives in slurm/: no argv naming a Slurm command is built in app/ or cli/
# (slurm/jobs.hpp, squeue.hpp, sacct.hpp ... build them).
check_slurm_words() {
  local root=$1 bad=0 file line text dir
  local words='srun|sbatch|squeue|scontrol|scancel|sinfo|sacct|sacctmgr|sshare|sprio'
  for dir in app cli; do
    [[ -d $root/$dir ]] || continue
    while IFS=: read -r file line text; do
      printf '%s:%s: a Slurm command line is built outside slurm/ (build it in slurm/): %s\n' "${file#"$root"/}" \
        "$line" "$(sed -E 's/^[[:space:]]+//' <<<"$text")"
      bad=1
    done < <(grep -rnE --include='*.cpp' --include='*.hpp' \
      "(\\{|push_back\\(|SLURM_TIME_FORMAT=standard\",)[[:space:]]*\"($words)\"" "$root/$dir" || true)
  done
  return "$bad"
}

# The tier of a path below app/: root, request, run, or the feature folder's name.
app_tier() {
  case $1 in
  */*) echo "${1%%/*}" ;;
  *) echo root ;;
  esac
}

check_app() {
  local root=$1 bad=0 file line inc from to
  [[ -d $root/app ]] || return 0
  while IFS=: read -r file line inc; do
    from=$(app_tier "${file#"$root"/app/}")
    inc=${inc#*\"app/}
    to=$(app_tier "${inc%\"*}")
    [[ $to == root || $to == "$from" ]] && continue
    case $from in
    root) ;;
    request) ;;
    run) [[ $to == request ]] && continue ;;
    *) [[ $to == request || $to == run ]] && continue ;;
    esac
    local why="a feature may include app/run/, app/request/ and the root, never another feature"
    case $from in
    root) why="the root (Env, settings) includes only the root" ;;
    request) why="app/request/ includes only the root" ;;
    run) why="app/run/ includes app/request/ and the root" ;;
    esac
    [[ $from == root ]] && from="app" || from="app/$from"
    [[ $to == root ]] && to="app" || to="app/$to"
    printf '%s:%s: %s/ may not include %s/ (%s)\n' "${file#"$root"/}" "$line" "$from" "$to" "$why"
    bad=1
  done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^#include "app/[^"]*"' "$root/app" || true)
  return "$bad"
}

if [[ ${1:-} == --self-test ]]; then
  root=$(cd "$here/../.." && pwd)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for d in "${!allowed[@]}"; do
    [[ -d $root/$d ]] && cp -r "$root/$d" "$tmp/$d"
  done
  check "$tmp" >/dev/null || { echo "self-test: the clean tree already fails"; exit 1; }
  printf '#include "slurm/squeue.hpp"\n' >"$tmp/strategy/zz_wrong.cpp"
  printf '#include <spdlog/spdlog.h>\n' >"$tmp/templates/zz_log.cpp"
  printf '#include "app/why/why.hpp"\n' >"$tmp/app/doctor/zz_feature.cpp"
  printf '#include "app/run/launch/launch.hpp"\n' >"$tmp/app/request/zz_up.cpp"
  printf 'auto a = std::vector<std::string>{"scontrol", "show", "job"};\n' >"$tmp/app/zz_argv.cpp"
  if out=$(check "$tmp"); then
    echo "self-test: a planted wrong include was not caught"
    exit 1
  fi
  grep -q 'strategy/zz_wrong.cpp:1: strategy/ may not include slurm/' <<<"$out" || { echo "self-test: $out"; exit 1; }
  grep -q 'templates/zz_log.cpp:1: templates/ may not log' <<<"$out" || { echo "self-test: $out"; exit 1; }
  grep -q 'app/doctor/zz_feature.cpp:1: app/doctor/ may not include app/why/' <<<"$out" || {
    echo "self-test: $out"
    exit 1
  }
  grep -q 'app/request/zz_up.cpp:1: app/request/ may not include app/run/' <<<"$out" || {
    echo "self-test: $out"
    exit 1
  }
  grep -q 'app/zz_argv.cpp:1: a Slurm command line is built outside slurm/' <<<"$out" || {
    echo "self-test: $out"
    exit 1
  }
  printf 'self-test: planted violations caught:\n%s\n' "$out"
  exit 0
fi

root=${1:-$(cd "$here/../.." && pwd)}
if check "$root"; then
  echo "layers: the dependency rule holds"
else
  echo "layers: the dependency rule is broken (docs/architecture.md)" >&2
  exit 1
fi
