#!/usr/bin/env bash
# Two runs on one --out: the second is refused with a message naming the first and touches nothing;
# the first completes readable. Then, with a complete --out, a run with --overwrite leaves the
# complete file untouched until it completes itself (it writes <out>.partial).
# Usage: concurrent_out.sh CFLRUN CHECK_RESULTS WORKDIR CFLRUN_ARGS...
set -u
cflrun="$1"; check="$2"; work="$3"; shift 3
rm -rf "$work"; mkdir -p "$work"
out="$work/run.h5"
fail() { echo "concurrent_out: FAIL: $*"; exit 1; }

"$cflrun" "$@" --quiet --out "$out" > "$work/first.log" 2>&1 &
first=$!
for _ in $(seq 1 600); do sleep 0.05; [ -f "$out.partial" ] && break; done
second="$("$cflrun" "$@" --quiet --out "$out" --overwrite 2>&1)"
status=$?
echo "$second"
[ "$status" -ne 0 ] || fail "the second run was not refused"
grep -q "another run is writing this --out (host .*, pid $first" <<<"$second" || fail "the refusal does not name the first run"
wait "$first" || { cat "$work/first.log"; fail "the first run failed"; }
"$check" rounds "$out" "$(h5dump -a /planned_rounds "$out" | sed -n 's/.*(0): \([0-9]*\).*/\1/p')" complete ||
  fail "the first run's file is not complete and readable"

before="$(sha256sum < "$out")"
"$cflrun" "$@" --quiet --out "$out" --overwrite > "$work/third.log" 2>&1 &
third=$!
for _ in $(seq 1 600); do sleep 0.05; [ -f "$out.partial" ] && break; done
[ "$before" = "$(sha256sum < "$out")" ] || fail "--overwrite changed the complete file while its run went on"
"$check" rounds "$out" 0 complete > /dev/null 2>&1 || h5dump -a /status "$out" | grep -q complete ||
  fail "the complete file became unreadable"
wait "$third" || { cat "$work/third.log"; fail "the overwriting run failed"; }
h5dump -a /status "$out" | grep -q '"complete"' || fail "the overwriting run did not leave a complete file"
echo "concurrent_out: ok"
