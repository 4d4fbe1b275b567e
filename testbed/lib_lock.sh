# shellcheck shell=bash
# The testbed locks (/tmp/rv-testbed.lock, /tmp/rv-testbed2.lock; docs/testbed.md, "Who uses a
# cluster when"), sourced by testbed/lib.sh. A test or benchmark that submits jobs or changes a
# cluster takes its lock exclusive; one that submits nothing and changes no cluster state takes it
# shared, and runs beside the other readers. Whoever takes it through tb_lock writes a line in
# LOCK.holders/PID (pid, mode, since, command), so that a waiter can say who holds it; a holder
# that took it another way (`flock LOCK CMD`, a daemon that inherited the descriptor) is found in
# /proc/*/fdinfo and named from ps.

# tb_lock FD LOCK shared|exclusive WHO: opens LOCK on descriptor FD and takes the flock on it.
# Waits at most RV_TESTBED_LOCK_WAIT seconds (default 600), naming the holders on stderr when the
# wait starts and every minute. Returns 0 once held (and recorded), 1 when the bound passed: the
# caller says what that means (a skip, not a failure of rv).
tb_lock() {
  local fd=$1 lock=$2 mode=$3 who=$4 bound=${RV_TESTBED_LOCK_WAIT:-600} flag=-x t0=$SECONDS step
  [[ $mode == shared ]] && flag=-s
  eval "exec $fd>>\"\$lock\""
  if ! flock -n "$flag" "$fd"; then
    while :; do
      step=$((bound - (SECONDS - t0)))
      ((step > 60)) && step=60
      ((step > 0)) || return 1
      tb_lock_say "$who" "waiting (at most ${bound} s in all) for the $mode lock $lock: $(tb_lock_holders "$lock")"
      ! flock -w "$step" "$flag" "$fd" || break
    done
    tb_lock_say "$who" "took the $mode lock $lock after $((SECONDS - t0)) s"
  fi
  mkdir -p "$lock.holders"
  printf '%s\t%s\t%s\t%s\n' "$$" "$mode" "$(date '+%F %T %Z')" "$who ($(tr '\0' ' ' <"/proc/$$/cmdline" | sed 's/ $//'))" \
    >"$lock.holders/$$"
}

# tb_unlock FD LOCK: the record removed, the flock released and FD closed.
tb_unlock() {
  rm -f "$2.holders/$$"
  flock -u "$1" 2>/dev/null || true
  eval "exec $1>&-"
}

tb_lock_say() { printf '%s: %s\n' "$1" "$2" >&2; }

# tb_lock_holders LOCK: one line naming the processes that hold LOCK now: "the testbed lock is held
# by PID 123 (COMMAND) since TIME, exclusive; ...". Only the topmost of a process tree that
# inherited the descriptor is named; "nobody (it was just released)" when the lock is free.
tb_lock_holders() {
  local lock=$1 ino pids=() pid ppid line out="" mode since cmd
  ino=$(stat -c %i "$lock" 2>/dev/null) || { echo "$lock does not exist"; return 0; }
  # fdinfo's lock line: "lock:	1: FLOCK  ADVISORY  WRITE 4242 fe:00:INODE 0 EOF" (the pid there is
  # whoever called flock, often flock(1) itself, long gone: the descriptor's owners are read instead).
  mapfile -t pids < <(grep -l -s -E "^lock:.* FLOCK .*:$ino " /proc/[0-9]*/fdinfo/* | cut -d/ -f3 | sort -un)
  for pid in "${pids[@]}"; do
    ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || continue
    [[ " ${pids[*]} " == *" $ppid "* ]] && continue # its parent holds it too: name the parent
    if [[ -f $lock.holders/$pid ]] && IFS=$'\t' read -r _ mode since cmd <"$lock.holders/$pid"; then
      line="PID $pid ($cmd) since $since, $mode"
    else
      mode=exclusive
      grep -q -s -E "^lock:.* FLOCK +ADVISORY +READ .*:$ino " /proc/"$pid"/fdinfo/* && mode=shared
      since=$(date -d "$(ps -o lstart= -p "$pid")" '+%F %T %Z' 2>/dev/null) || since="?"
      line="PID $pid ($(ps -o args= -p "$pid" | cut -c1-120)) since $since, $mode"
    fi
    out+=${out:+; }$line
  done
  # The records of holders that died without tb_unlock (killed by a timeout) are stale.
  for line in "$lock.holders"/*; do
    [[ ! -f $line || -d /proc/${line##*/} ]] || rm -f "$line"
  done
  echo "the testbed lock is held by ${out:-nobody (it was just released)}"
}
