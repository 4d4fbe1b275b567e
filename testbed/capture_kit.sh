# shellcheck shell=bash
# shellcheck disable=SC2034  # index, version and out are for the capture scripts that source this
# What the capture scripts share (capture.sh, capture_why.sh, capture_window.sh): the testbed
# lock, the output directory, jobs made as the testbed user and cancelled on exit, and `capture`,
# which runs one command into a file and indexes it for the README.
# shellcheck source=testbed/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# capture_kit_lock: the testbed lock (fd 9) for the whole capture; the testbed must be up.
capture_kit_lock() {
  [[ -f $TB_DIR/env ]] || tb_die "no testbed: run testbed/up.sh first"
  exec 9>>"${RV_TESTBED_LOCK:-/tmp/rv-testbed.lock}"
  flock -w 2400 9 || tb_die "the testbed lock stayed taken"
}

# capture_kit_out SUBDIR [DIR]: `version` (Slurm's), `out` (DIR, else tests/data/slurm/<x.y>/SUBDIR;
# SUBDIR "" for that folder itself) emptied of its old captures, an empty `index`, and the trap that
# cancels every job `tracked` (and so `submit`) made.
capture_kit_out() {
  version=$(sinfo -V | awk '{print $2}')
  out=${2:-$(dirname "${BASH_SOURCE[0]}")/../tests/data/slurm/${version%.*}${1:+/$1}}
  mkdir -p "$out"
  rm -f "$out"/*.txt
  index=()
  capture_ids=$(mktemp)
  trap capture_kit_cleanup EXIT
}
capture_kit_cleanup() {
  if [[ -s $capture_ids ]]; then xargs scancel <"$capture_ids" 2>/dev/null || true; fi
  rm -f "$capture_ids"
}

as_user() { runuser -u "$TB_SSH_USER" -- bash -c 'cd && "$@"' bash "$@"; }
# capture FILE stdout|stderr|both CMD...: keeps that stream of CMD in $out/FILE, indexed with its
# exit code.
capture() {
  local file=$1 stream=$2 rc=0
  shift 2
  case $stream in
    stdout) "$@" >"$out/$file" 2>/dev/null || rc=$? ;;
    stderr) "$@" 2>"$out/$file" >/dev/null || rc=$? ;;
    both) "$@" >"$out/$file" 2>&1 || rc=$? ;;
  esac
  local shown=$*
  shown=${shown#as_user }
  index+=("| \`$file\` | \`${shown//|/\\|}\` | $stream | $rc |")
}
# tracked CMD...: runs an `sbatch --parsable` command line; prints the job id (cancelled on exit).
tracked() {
  local j
  j=$("$@" | cut -d';' -f1)
  echo "$j" >>"$capture_ids"
  echo "$j"
}
# submit SBATCH-ARGS...: a 50-minute sleep as the testbed user; prints its id (cancelled on exit).
submit() { tracked as_user sbatch --parsable -o /dev/null --wrap 'sleep 3000' "$@"; }
state_of() { squeue -h -t all -j "$1" -o %T 2>/dev/null; }
in_state() { [[ $(state_of "$1") == "$2" ]]; }
has_start() { squeue -h --start -j "$1" -o %S 2>/dev/null | grep -Eq '^[0-9]{4}-'; }
