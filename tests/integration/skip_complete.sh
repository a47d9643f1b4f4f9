#!/usr/bin/env bash
# A complete result file with --skip-complete: cflrun exits 0 at once and leaves the file untouched.
# Usage: skip_complete.sh CFLRUN COMPLETE_FILE ARGS...
set -euo pipefail
cflrun="$1"; file="$2"; shift 2
before="$(sha256sum "$file")"
output="$("$cflrun" "$@" --out "$file" --skip-complete --overwrite)"
echo "$output"
grep -q "already complete" <<<"$output" || { echo "skip_complete: FAIL: no 'already complete' message"; exit 1; }
[ "$before" = "$(sha256sum "$file")" ] || { echo "skip_complete: FAIL: the file changed"; exit 1; }
echo "skip_complete: ok"
