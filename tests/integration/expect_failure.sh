#!/usr/bin/env bash
# Runs a command that must fail: non-zero exit within the time limit, and output matching a regex.
# Usage: expect_failure.sh SECONDS REGEX COMMAND...
set -u
limit="$1"; regex="$2"; shift 2
output="$(timeout "$limit" "$@" 2>&1)"
status=$?
echo "$output"
if [ "$status" -eq 124 ]; then echo "expect_failure: FAIL: hung for ${limit}s"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "expect_failure: FAIL: exit status 0"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_failure: FAIL: output does not match /$regex/"; exit 1; fi
count="$(grep -Ec -- "$regex" <<<"$output")"
echo "expect_failure: ok (exit $status, message printed $count time(s))"
