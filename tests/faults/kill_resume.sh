#!/usr/bin/env bash
# kill -9 a run once its partial result file holds ROUND finished rounds, resume it with --resume,
# and check that the completed file equals an uninterrupted run's bit for bit (timings aside).
# Usage: kill_resume.sh CHECK_RESULTS WORKDIR ROUND LAUNCH... -- CFLRUN_ARGS...
#   LAUNCH: the command that starts cflrun (e.g. "cflrun" or "mpiexec -n 3 cflrun").
set -u
check="$1"; work="$2"; round="$3"; shift 3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "kill_resume: FAIL: $*"; exit 1; }

run_reference "$work" "$check"

# Rank 0 holds at the start of the next round (CFLRUN_TEST_HOLD), so the kill comes after exactly
# ROUND rounds however fast they run.
CFLRUN_TEST_HOLD="0:$((round + 1))" setsid "${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" \
  > "$work/killed.log" 2>&1 &
pid=$!
rounds="$(wait_for_rounds "$work/run.h5.partial" "$round" "$pid")"
pkill -9 -s "$pid"  # the whole session: mpiexec and every rank (ranks may have their own groups)
wait "$pid" 2>/dev/null
for _ in $(seq 1 100); do pgrep -s "$pid" > /dev/null || break; sleep 0.05; done
[ -f "$work/run.h5" ] && fail "the killed run completed before it was killed; raise --rounds"
[ "$rounds" = "$round" ] || fail "killed with ${rounds} finished round(s) in the partial file, not ${round}"
echo "killed with ${rounds} finished round(s) in the partial file"

"${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" --resume > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run failed"; }
cat "$work/resumed.log"
[ -f "$work/run.h5.checkpoint" ] && fail "the checkpoint was left behind"
[ -f "$work/run.h5.partial" ] && fail "the partial file was left behind"
same_as_reference "$work" "$check" "$work/run.h5" ||
  { diff "$work/reference.txt" "$work/run.txt" | head -20; fail "the resumed run differs"; }
echo "kill_resume: ok, resumed run identical to the uninterrupted one"
