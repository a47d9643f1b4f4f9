#!/usr/bin/env bash
# A rank stopped with SIGSTOP (a hung node): the job must end within the watchdog's timeout with a
# message naming the rank, instead of waiting forever. A stopped worker is named by rank 0, which
# marks the partial file failed; a stopped rank 0 (the server) is named by the workers.
# Usage: watchdog.sh WORKDIR TIMEOUT_SECONDS RANK LAUNCH... -- CFLRUN_ARGS...
#   LAUNCH starts 3 ranks (mpiexec -n 3 ... cflrun); RANK is stopped after the first round.
set -u
work="$1"; timeout="$2"; rank="$3"; shift 3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "watchdog: FAIL: $*"; exit 1; }
victim=""
cleanup() {
  [ -n "$victim" ] && kill -CONT "$victim" 2>/dev/null
  pkill -9 -s "$pid" 2>/dev/null
  remove_session_tmp
}
trap cleanup EXIT

setsid "${launch[@]}" "${args[@]}" --quiet --round-timeout "$timeout" --out "$work/run.h5" > "$work/run.log" 2>&1 &
pid=$!
wait_for_rounds "$work/run.h5.partial" 1 "$pid" > /dev/null
# The rank's process: the launcher's descendant whose environment says OMPI_COMM_WORLD_RANK=RANK.
for p in $(pgrep -s "$pid"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then victim="$p"; fi
done
[ -n "$victim" ] || fail "no rank-$rank process found under the launcher (pid $pid)"
kill -STOP "$victim"
stopped=$SECONDS
echo "stopped rank $rank (pid $victim) after round 1"
wait "$pid"
status=$?
took=$((SECONDS - stopped))
cat "$work/run.log"
[ "$status" -ne 0 ] || fail "the job exited 0"
# The timeout, plus the checkpoint and abort, well under the 30 minutes of an unbounded wait.
[ "$took" -le $((timeout * 2 + 20)) ] || fail "the job took ${took} s to end after the stop (timeout ${timeout} s)"
if [ "$rank" -eq 0 ]; then
  grep -Eq "watchdog: the server rank 0 \(host .*, pid $victim\) .*did not complete collective" "$work/run.log" ||
    fail "the message does not name the server, rank 0, and its pid"
  # mpiexec continues the stopped server (SIGCONT) as it ends the job; a server that then times out
  # on the ended workers must say it was stopped itself, not blame them.
  ! grep -Eq "watchdog: rank [12] " "$work/run.log" || fail "the continued server blamed the ended workers"
  # The workers get mpiexec's SIGCONT too, though never stopped: none may say it was stopped.
  ! grep -Eq "this rank, rank [12] .*was stopped and continued" "$work/run.log" ||
    fail "a worker that was never stopped says it was stopped and continued"
else
  grep -Eq "watchdog: rank $rank \(host .*, pid $victim\) (did not reach|reached but does not answer in) collective" \
    "$work/run.log" || fail "the message does not name rank $rank and its pid"
  h5dump -a /status "$work/run.h5.partial" | grep -q '"failed: watchdog' || fail "the partial file is not marked failed"
fi
echo "watchdog: ok, the job ended ${took} s after the stop (exit status $status)"
