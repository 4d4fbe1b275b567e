#!/usr/bin/env bash
# A compiler launcher that records each compile's CPU seconds (user + sys) and output, a line
# "SECONDS<TAB>OUTPUT" in $RV_CPU_LOG (default BUILD_DIR/cpu.log, the build's working directory):
# unlike .ninja_log's wall times, a loaded machine inflates them little. scripts/tu_seconds.sh
# reads it. Configure a throwaway build with it (no ccache):
#   cmake -S . -B /tmp/b -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/tu_cpu_launcher.sh" ...
out='?' prev=''
for a in "$@"; do
  [[ $prev == -o ]] && out=$a
  prev=$a
done
log=${RV_CPU_LOG:-$PWD/cpu.log}
/usr/bin/time -f "%U %S" -o "$log.$$" -- "$@"
rc=$?
awk -v o="$out" '{ printf "%.2f\t%s\n", $1 + $2, o }' "$log.$$" >>"$log"
rm -f "$log.$$"
exit "$rc"
