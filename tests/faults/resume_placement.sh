#!/usr/bin/env bash
# A run resumed with another placement (--client-batch here: the same results up to float
# rounding, not bit for bit) says so and records it: /config/build_history has the rounds before
# with the old placement and the resumed rounds with the new one (issue 44, item 7).
# Usage: resume_placement.sh WORKDIR CFLRUN CFLRUN_ARGS...
set -u
work="$1"; cflrun="$2"; shift 2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "resume_placement: FAIL: $*"; exit 1; }

setsid "$cflrun" "$@" --client-batch 1 --quiet --out "$work/run.h5" > "$work/first.log" 2>&1 &
pid=$!
wait_for_rounds "$work/run.h5.partial" 1 "$pid" > /dev/null
kill -TERM "$pid"
wait "$pid"
[ "$?" -eq 75 ] || { cat "$work/first.log"; fail "the first run was not interrupted"; }
"$cflrun" "$@" --client-batch 4 --quiet --out "$work/run.h5" --resume > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run failed"; }
cat "$work/resumed.log"
grep -q "note: resuming with client-batch 4, .* where the rounds before ran with client-batch 1" \
  "$work/resumed.log" || fail "the resumed run did not say that its placement changed"
history="$(h5dump -a /config/build_history "$work/run.h5")"
echo "$history"
grep -q 'round 1: .*; client-batch 1, ' <<< "$history" || fail "build_history lacks the first placement"
grep -Eq 'round ([2-9]|[1-9][0-9]+): .*; client-batch 4, ' <<< "$history" ||
  fail "build_history lacks the resumed placement"
echo "resume_placement: ok"
