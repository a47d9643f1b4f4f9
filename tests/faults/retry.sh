#!/usr/bin/env bash
# Runs COMMAND until it exits 0 (or 77, skipped), at most TRIES times: for a test with a known
# timing flake (the test's comment in tests/faults/CMakeLists.txt says which and why), so that a
# real regression, which fails every try, still fails the test.
# Usage: retry.sh TRIES COMMAND...
tries="$1"; shift
status=1
for ((try = 1; try <= tries; try++)); do
  "$@"
  status=$?
  if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then exit "$status"; fi
  echo "retry: try $try of $tries failed (exit $status)"
done
exit "$status"
