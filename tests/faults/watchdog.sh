#!/usr/bin/env bash
# A worker rank stopped with SIGSTOP (a hung node): the job must end within the watchdog's timeout
# with a message naming the rank, instead of waiting forever.
# Usage: watchdog.sh WORKDIR TIMEOUT_SECONDS LAUNCH... -- CFLRUN_ARGS...
#   LAUNCH starts 3 ranks (mpiexec -n 3 ... cflrun); rank 2 is stopped after the first round.
set -u
work="$1"; timeout="$2"; shift 2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "watchdog: FAIL: $*"; exit 1; }
victim=""
cleanup() { [ -n "$victim" ] && kill -CONT "$victim" 2>/dev/null; pkill -9 -s "$pid" 2>/dev/null; }
trap cleanup EXIT

setsid "${launch[@]}" "${args[@]}" --quiet --round-timeout "$timeout" --out "$work/run.h5" > "$work/run.log" 2>&1 &
pid=$!
wait_for_rounds "$work/run.h5.partial" 1 "$pid" > /dev/null
# The rank-2 process: the launcher's descendant whose environment says OMPI_COMM_WORLD_RANK=2.
for p in $(pgrep -s "$pid"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=2'; then victim="$p"; fi
done
[ -n "$victim" ] || fail "no rank-2 process found under the launcher (pid $pid)"
kill -STOP "$victim"
stopped=$SECONDS
echo "stopped rank 2 (pid $victim) after round 1"
wait "$pid"
status=$?
took=$((SECONDS - stopped))
cat "$work/run.log"
[ "$status" -ne 0 ] || fail "the job exited 0"
# The timeout, plus the checkpoint and abort, well under the 30 minutes of an unbounded wait.
[ "$took" -le $((timeout * 2 + 20)) ] || fail "the job took ${took} s to end after the stop (timeout ${timeout} s)"
grep -Eq "watchdog: rank 2 \(host .*, pid $victim\) (did not reach|reached but does not answer in) collective" "$work/run.log" || fail "the message does not name rank 2 and its pid"
h5dump -a /status "$work/run.h5.partial" | grep -q '"failed: watchdog' || fail "the partial file is not marked failed"
echo "watchdog: ok, the job ended ${took} s after the stop (exit status $status)"
