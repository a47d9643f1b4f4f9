#!/usr/bin/env bash
# Benchmark (not a test): seconds per round and per phase of jobs/fmnist_label_skew1.cfg with 1, 2
# and 3 MPI ranks (rank 0 = server; 2 ranks = server + 1 worker; 3 ranks = server + 2 workers), and
# with 2 and 3 ranks where the server hosts clients too (--server-hosts-clients), alternating the
# layouts REPEATS times.
# Usage: tests/bench/round_time.sh [ROUNDS=6] [BUILD_DIR=build] [REPEATS=1]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds="${1:-6}"
build="${2:-build}"
repeats="${3:-1}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$repeats"); do
  for layout in 1 2 3 2s 3s; do
    ranks="${layout%s}"
    extra=()
    [ "$layout" != "$ranks" ] && extra=(--server-hosts-clients)
    launcher=()
    [ "$ranks" -gt 1 ] && launcher=(mpiexec -n "$ranks" --oversubscribe)
    "${launcher[@]}" "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --quiet \
      --checkpoint-every 0 "${extra[@]}" --out "$out/layout$layout.$r.h5" >/dev/null
    echo "== repeat $r, $ranks ranks$([ ${#extra[@]} -gt 0 ] && echo ', server hosts clients')"
    "$build/tests/bench/round_time_summary" "$out/layout$layout.$r.h5" 1
  done
done
