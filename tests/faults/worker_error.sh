#!/usr/bin/env bash
# An error that only one worker rank sees, mid-run (injected: CFLRUN_TEST_FAULT=2:3 makes rank 2
# throw at the start of round 3): the job ends at once, not after the watchdog's timeout; rank 0
# marks the partial file "failed: rank 2 (host H, pid P) failed: <its error>" and removes the lock;
# the checkpoint of round 2 is kept, and --resume then completes a file equal to an uninterrupted
# run's.
# Usage: worker_error.sh CHECK_RESULTS WORKDIR LAUNCH... -- CFLRUN_ARGS...   (LAUNCH starts 3 ranks)
set -u
check="$1"; work="$2"; shift 2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
split_launch "$@"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "worker_error: FAIL: $*"; exit 1; }

run_reference "$work" "$check"
start=$SECONDS
CFLRUN_TEST_FAULT=2:3 "${launch[@]}" "${args[@]}" --quiet --round-timeout 600 --out "$work/run.h5" > "$work/run.log" 2>&1 &&
  fail "the run with a failing rank exited 0"
took=$(( SECONDS - start ))
cat "$work/run.log"
[ "$took" -le 60 ] || fail "the job took $took s to end (the watchdog's 600 s must not be needed)"
grep -q "rank 2 (host .*, pid [0-9]*) failed: injected test fault" "$work/run.log" || fail "rank 0 does not name rank 2 and its error"
h5dump -a /status "$work/run.h5.partial" | grep -q '"failed: rank 2 (host .*) failed: injected test fault' ||
  { h5dump -a /status "$work/run.h5.partial"; fail "the partial file is not marked failed with rank 2's error"; }
[ ! -e "$work/run.h5.lock" ] || fail "the lock file was left"
[ -f "$work/run.h5.checkpoint" ] || fail "the checkpoint was not kept"
"${launch[@]}" "${args[@]}" --quiet --out "$work/run.h5" --resume > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "--resume failed"; }
same_as_reference "$work" "$check" "$work/run.h5" || fail "the resumed file differs from the uninterrupted run"
echo "worker_error: ok: the job ended $took s after the error, the partial file named it, --resume completed it identically"
