#!/usr/bin/env bash
# --skip-complete skips a complete run of the same options (the file untouched), and with other
# options (another seed) stops with a message naming the difference, leaving the file untouched.
# Usage: skip_complete_config.sh CFLRUN WORKDIR CFLRUN_ARGS...
set -u
cflrun="$1"; work="$2"; shift 2
rm -rf "$work"; mkdir -p "$work"
file="$work/run.h5"
fail() { echo "skip_complete_config: FAIL: $*"; exit 1; }

"$cflrun" "$@" --quiet --out "$file" > "$work/first.log" 2>&1 || { cat "$work/first.log"; fail "the first run failed"; }
before="$(sha256sum < "$file")"

output="$("$cflrun" "$@" --quiet --out "$file" --skip-complete --overwrite --checkpoint-every 3 2>&1)" ||
  { echo "$output"; fail "the same options (another --checkpoint-every) were not skipped"; }
grep -q "already complete" <<<"$output" || { echo "$output"; fail "no 'already complete' message"; }

output="$("$cflrun" "$@" --seed 99 --out "$file" --skip-complete --overwrite 2>&1)"
status=$?
echo "$output"
[ "$status" -ne 0 ] || fail "a run of other options was skipped"
grep -q -- "--seed: 99 (recorded" <<<"$output" || fail "the difference is not named"
[ "$before" = "$(sha256sum < "$file")" ] || fail "the file changed"
echo "skip_complete_config: ok"
