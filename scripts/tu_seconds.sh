#!/usr/bin/env bash
# The build's compile time in TU-seconds, per target and in all, for every compiled output (.o, and
# the precompiled headers' .gch) as last built: from ninja's own log, the sum of (end - start), a
# wall time that a loaded machine inflates; and, when the build used scripts/tu_cpu_launcher.sh,
# from its cpu.log, the CPU seconds (user + sys) of the same outputs.
#   scripts/tu_seconds.sh [BUILD_DIR]   (default build/)
set -euo pipefail
dir=${1:-build}
[[ -f $dir/.ninja_log ]] || { echo "tu_seconds: no $dir/.ninja_log (build with ninja first)" >&2; exit 2; }
# The outputs the build has now (a log keeps those of files since removed from it too).
current=$(mktemp)
trap 'rm -f "$current"' EXIT
ninja -C "$dir" -t targets all | sed -n 's/^\(.*\.\(o\|gch\)\): .*/\1/p' >"$current"
# Input: "OUTPUT<TAB>SECONDS" lines, the last of an output its latest build; prints per target.
sum() {
  awk -F'\t' -v what="$1" '
    FILENAME == ARGV[1] { now[$1] = 1; next }
    ($1 in now) { s[$1] = $2 }
    END {
      for (o in s) {
        t = o
        sub(/\/CMakeFiles\//, "|", t); sub(/\.dir\/.*/, "", t); sub(/.*\|/, "", t)
        per[t] += s[o]; n[t]++; all += s[o]; count++
      }
      for (t in per) printf "%-4s %-22s %4d TUs %8.1f s\n", what, t, n[t], per[t]
      printf "%-4s %-22s %4d TUs %8.1f s\n", what, "all", count, all
    }' "$current" - | sort -k5 -n
}
# .ninja_log v5: start_ms end_ms mtime output hash, one line per output built.
awk -F'\t' 'NR > 1 { printf "%s\t%.3f\n", $4, ($2 - $1) / 1000 }' "$dir/.ninja_log" | sum wall
if [[ -f $dir/cpu.log ]]; then
  awk -F'\t' '{ printf "%s\t%s\n", $2, $1 }' "$dir/cpu.log" | sum cpu
fi
