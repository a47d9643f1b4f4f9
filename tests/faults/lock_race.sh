#!/usr/bin/env bash
# The lock race with a widened window (issue 24): run B opens <out>.lock while run A holds it and,
# held back by tests/faults/flock_delay.c, locks it only when told to. Meanwhile A ends (removing
# the lock file, then unlocking) and run C makes and locks a new lock file; then B goes on. B's lock
# on the removed file must not count: B is refused naming C, and C's result is complete and
# readable. Exactly one run writes.
# Usage: lock_race.sh CFLRUN CHECK_RESULTS SHIM WORKDIR CFLRUN_ARGS...
set -u
cflrun="$1"; check="$2"; shim="$3"; work="$4"; shift 4
rm -rf "$work"; mkdir -p "$work"
out="$work/run.h5"
fail() { echo "lock_race: FAIL: $*"; exit 1; }

"$cflrun" "$@" --rounds 15 --quiet --out "$out" > "$work/a.log" 2>&1 &
a=$!
for _ in $(seq 1 600); do sleep 0.05; [ -s "$out.lock" ] && break; done
[ -s "$out.lock" ] || fail "run A took no lock"
CFLRUN_FLOCK_WAITING="$work/b.waiting" CFLRUN_FLOCK_GO="$work/b.go" LD_PRELOAD="$shim" \
  "$cflrun" "$@" --rounds 2 --quiet --overwrite --out "$out" > "$work/b.log" 2>&1 &
b=$!
for _ in $(seq 1 600); do sleep 0.05; [ -e "$work/b.waiting" ] && break; done
[ -e "$work/b.waiting" ] || fail "run B never reached its lock"
grep -q "pid $a" "$out.lock" 2> /dev/null || fail "run A released its lock before run B opened the lock file: the race was not set up"
wait "$a" || { cat "$work/a.log"; fail "run A failed"; }
"$cflrun" "$@" --rounds 30 --quiet --overwrite --out "$out" > "$work/c.log" 2>&1 &
c=$!
for _ in $(seq 1 600); do sleep 0.05; grep -q "pid $c" "$out.lock" 2> /dev/null && break; done
grep -q "pid $c" "$out.lock" || fail "run C took no lock"
kill -0 "$b" 2> /dev/null || fail "run B ended before run C locked: the race was not set up"
touch "$work/b.go"
wait "$b"
b_status=$?
cat "$work/b.log"
wait "$c" || { cat "$work/c.log"; fail "run C failed"; }
[ "$b_status" -ne 0 ] || fail "run B ran beside run C (it held the lock of the removed lock file)"
grep -q "another run is writing this --out (host .*, pid $c" "$work/b.log" || fail "run B's refusal does not name run C"
"$check" rounds "$out" 30 complete || fail "run C's file is not complete and readable"
echo "lock_race: ok (B refused, C complete)"
