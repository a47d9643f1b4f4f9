#!/usr/bin/env bash
# Kills a running cflrun with SIGKILL once its result file (<out>.partial while it runs) holds 2
# finished rounds, then checks that the file is readable, holds exactly the finished rounds, and
# that --out itself was not written (only a complete run is renamed to it).
# Usage: killed_run.sh CFLRUN CHECK_RESULTS OUT ARGS...
set -u
cflrun="$1"; check="$2"; out="$3"; shift 3
partial="$out.partial"
rm -f "$out" "$partial" "$out.checkpoint"
"$cflrun" "$@" --out "$out" --quiet &
pid=$!
for _ in $(seq 1 600); do
  sleep 0.1
  if [ -f "$partial" ] && HDF5_USE_FILE_LOCKING=FALSE h5dump -a /completed_rounds "$partial" 2>/dev/null | grep -Eq '\(0\): ([2-9]|[1-9][0-9])'; then
    break
  fi
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rounds="$(h5dump -a /completed_rounds "$partial" | sed -n 's/.*(0): \([0-9]*\).*/\1/p')"
echo "killed after $rounds finished round(s)"
[ -n "$rounds" ] && [ "$rounds" -ge 2 ] || { echo "killed_run: FAIL: no readable finished rounds"; exit 1; }
[ ! -e "$out" ] || { echo "killed_run: FAIL: --out was written by an unfinished run"; exit 1; }
exec "$check" rounds "$partial" "$rounds" running
