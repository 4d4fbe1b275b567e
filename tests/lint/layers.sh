#!/usr/bin/env bash
# The dependency rule of docs/architecture.md, checked: each folder may include headers only of
# the folders listed for it, and only the folders that may log include spdlog.
#   cli -> app -> {strategy, templates, slurm, sync} -> core   (a layer may use any layer below it;
#   never one above, never a sibling)
# Inside app/, the tiers (docs/architecture.md): the root (Env, settings) includes only the root;
# app/request/ the root; app/run/ request/ and the root; every other subfolder is one feature and
# includes run/, request/ and the root, never another feature. Inside app/run/, its rooms:
# plan/ and show/ include neither each other nor launch/; launch/ includes plan/ and show/; the
# modules at run/'s root (the walks of whole commands) include every room, and no room includes
# them. A folder in app/run/ the lint does not know is an error (name its arrows here first).
# Inside core/, SSH sits on top of the process room: core/ssh/ (the libssh session, the held
# connection, SshRunner) may include core/process/ (the Runner it implements) and the rest of core;
# no other core folder includes core/ssh/.
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
  check_core "$root" || bad=1
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

# The tier of a path below app/: root, request, a feature folder's name, and for app/run/ its
# root (run) or its room (run/plan, run/launch, run/show).
app_tier() {
  case $1 in
  run/*/*)
    local rest=${1#run/}
    echo "run/${rest%%/*}"
    ;;
  */*) echo "${1%%/*}" ;;
  *) echo root ;;
  esac
}

# The tiers inside app/ (besides the features): those each may include besides itself and the root.
declare -A app_allowed=(
  [request]=""
  [run]="request run/plan run/launch run/show"
  [run/plan]="request"
  [run/show]="request"
  [run/launch]="request run/plan run/show"
)
declare -A app_why=(
  [root]="the root (Env, settings) includes only the root"
  [request]="app/request/ includes only the root"
  [run]="app/run/'s root includes its rooms, app/request/ and the root"
  [run/plan]="app/run/plan/ includes app/request/ and the root: planning knows nothing of launching or showing"
  [run/show]="app/run/show/ includes app/request/ and the root: showing knows nothing of planning or launching"
  [run/launch]="app/run/launch/ includes app/run/plan/, app/run/show/, app/request/ and the root, never run/'s root"
)
app_features="a feature may include app/run/, app/request/ and the root, never another feature"

check_app() {
  local root=$1 bad=0 file line inc from to why dir
  [[ -d $root/app ]] || return 0
  # Every folder of app/run/ is a room the rules above know.
  if [[ -d $root/app/run ]]; then
    for dir in "$root"/app/run/*/; do
      [[ -d $dir ]] || continue
      dir=$(basename "$dir")
      [[ -v "app_allowed[run/$dir]" ]] && continue
      printf 'app/run/%s/: not a room of app/run/ the lint knows (plan, launch, show): give it its arrows in tests/lint/layers.sh and docs/architecture.md\n' "$dir"
      bad=1
    done
  fi
  while IFS=: read -r file line inc; do
    from=$(app_tier "${file#"$root"/app/}")
    inc=${inc#*\"app/}
    to=$(app_tier "${inc%\"*}")
    [[ $to == root || $to == "$from" ]] && continue
    if [[ $from == root ]]; then
      why=${app_why[root]}
    elif [[ -v "app_allowed[$from]" ]]; then
      [[ " ${app_allowed[$from]} " == *" $to "* ]] && continue
      why=${app_why[$from]}
    else # a feature
      [[ $to == request || $to == run || $to == run/* ]] && continue
      why=$app_features
    fi
    [[ $from == root ]] && from="app" || from="app/$from"
    [[ $to == root ]] && to="app" || to="app/$to"
    printf '%s:%s: %s/ may not include %s/ (%s)\n' "${file#"$root"/}" "$line" "$from" "$to" "$why"
    bad=1
  done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^#include "app/[^"]*"' "$root/app" || true)
  return "$bad"
}

check_core() {
  local root=$1 bad=0 file line inc from
  [[ -d $root/core ]] || return 0
  while IFS=: read -r file line inc; do
    from=${file#"$root"/core/}
    [[ $from == ssh/* ]] && continue
    [[ $from == */* ]] && from="core/${from%%/*}" || from="core"
    printf '%s:%s: %s/ may not include core/ssh/ (SSH implements the Runner of core/process/; nothing in core depends on it)\n' \
      "${file#"$root"/}" "$line" "$from"
    bad=1
  done < <(grep -rnoE --include='*.cpp' --include='*.hpp' '^#include "core/ssh/[^"]*"' "$root/core" || true)
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
  printf '#include "app/run/launch/submit.hpp"\n' >"$tmp/app/run/plan/zz_plan_up.cpp"
  printf '#include "app/run/launch/race.hpp"\n' >"$tmp/app/run/show/zz_show_up.cpp"
  printf '#include "app/run/plan/planning.hpp"\n' >"$tmp/app/run/show/zz_show_plan.cpp"
  printf '#include "app/run/pipeline.hpp"\n' >"$tmp/app/run/launch/zz_launch_root.cpp"
  mkdir -p "$tmp/app/run/zz_room"
  printf '#include "app/request/requests.hpp"\n' >"$tmp/app/run/zz_room/zz.cpp"
  printf 'auto a = std::vector<std::string>{"scontrol", "show", "job"};\n' >"$tmp/app/zz_argv.cpp"
  printf '#include "core/ssh/runner.hpp"\n' >"$tmp/core/process/zz_ssh.cpp"
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
  expect_caught() {
    grep -qF "$1" <<<"$out" || {
      echo "self-test: not caught: $1"
      echo "$out"
      exit 1
    }
  }
  expect_caught 'app/run/plan/zz_plan_up.cpp:1: app/run/plan/ may not include app/run/launch/'
  expect_caught 'app/run/show/zz_show_up.cpp:1: app/run/show/ may not include app/run/launch/'
  expect_caught 'app/run/show/zz_show_plan.cpp:1: app/run/show/ may not include app/run/plan/'
  expect_caught 'app/run/launch/zz_launch_root.cpp:1: app/run/launch/ may not include app/run/'
  expect_caught 'app/run/zz_room/: not a room of app/run/ the lint knows'
  grep -q 'app/zz_argv.cpp:1: a Slurm command line is built outside slurm/' <<<"$out" || {
    echo "self-test: $out"
    exit 1
  }
  grep -q 'core/process/zz_ssh.cpp:1: core/process/ may not include core/ssh/' <<<"$out" || {
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
