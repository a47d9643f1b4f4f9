#!/usr/bin/env bash
# Kill at every write: a run is killed (SIGKILL) just before its n-th write to its own files (the
# partial result file, the checkpoint and its .tmp, the lock, the renames and removals; counted by
# the LD_PRELOAD shim tests/faults/write_kill.c), then continued with --resume. For every kill
# point: a file at --out must equal the uninterrupted run's (never a wrong file marked complete),
# and the resumed file must equal it too (timings aside), or the resume must refuse with an error
# naming the problem and a run with --overwrite must then give the uninterrupted run's file.
# Usage: kill_sweep.sh CHECK_RESULTS SHIM WORKDIR POINTS LAUNCH... -- CFLRUN_ARGS...
#   POINTS: "all" (every write), or N: N kill points evenly spaced plus the run's last 6 writes
#           (verifying, sealing and publishing the complete file, removing the checkpoint and lock).
set -u
check="$1"; shim="$2"; work="$3"; points="$4"; shift 4
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "kill_sweep: FAIL: $*"; exit 1; }
run() { "${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" "$@"; }
same() { same_as_reference "$work" "$check" "$work/run.h5"; }

run_reference "$work" "$check"
CFLRUN_KILL_MATCH=run.h5 CFLRUN_KILL_COUNT="$work/count" LD_PRELOAD="$shim" run > "$work/count.log" 2>&1 ||
  { cat "$work/count.log"; fail "the counting run failed"; }
same || fail "the counting run differs from the uninterrupted one"
total="$(cat "$work/count")"
if [ "$points" = all ]; then
  kill_points="$(seq 1 "$total")"
else
  kill_points="$( { seq 1 $(( (total + points - 1) / points )) "$total"; seq $(( total > 6 ? total - 5 : 1 )) "$total"; } | sort -nu)"
fi
echo "kill_sweep: $total writes in a run; killing at $(wc -w <<<"$kill_points") of them"

resumed=0; refused=0; published=0
for n in $kill_points; do
  rm -f "$work"/run.h5*
  (CFLRUN_KILL_MATCH=run.h5 CFLRUN_KILL_AT="$n" LD_PRELOAD="$shim" run; exit $?) > "$work/killed.log" 2>&1 &&
    fail "write $n: the run was not killed"
  if [ -f "$work/run.h5" ]; then
    same || fail "write $n: the killed run left a file at --out that differs from the uninterrupted run"
    published=$(( published + 1 ))
  fi
  if run --resume > "$work/resumed.log" 2>&1; then
    same || { diff "$work/reference.txt" "$work/run.txt" | head; fail "write $n: the resumed file differs"; }
    leftover="$(cd "$work" && ls run.h5.* 2>/dev/null)"
    [ -z "$leftover" ] || fail "write $n: files left beside --out: $leftover"
    resumed=$(( resumed + 1 ))
  else
    grep -q "error: " "$work/resumed.log" || { cat "$work/resumed.log"; fail "write $n: the resume failed without an error message"; }
    echo "write $n: resume refused: $(grep 'error: ' "$work/resumed.log" | head -1)"
    run --overwrite > "$work/overwrite.log" 2>&1 || { cat "$work/overwrite.log"; fail "write $n: --overwrite failed after a refused resume"; }
    same || fail "write $n: the --overwrite run differs"
    refused=$(( refused + 1 ))
  fi
done
echo "kill_sweep: ok: $resumed resumed identical, $refused refused (then --overwrite identical), $published already published"
