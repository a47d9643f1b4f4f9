#!/usr/bin/env bash
# Benchmark (not a test): seconds per round and per phase of jobs/fmnist_label_skew1.cfg with 1, 2
# and 3 MPI ranks (rank 0 = server; 2 ranks = server + 1 worker; 3 ranks = server + 2 workers).
# Usage: tests/bench/round_time.sh [ROUNDS=6] [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds="${1:-6}"
build="${2:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$(mktemp -d)"
for ranks in 1 2 3; do
  launcher=()
  [ "$ranks" -gt 1 ] && launcher=(mpiexec -n "$ranks" --oversubscribe)
  "${launcher[@]}" "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --rounds "$rounds" --quiet \
    --out "$out/ranks$ranks.h5" >/dev/null
  "$build/tests/bench/round_time_summary" "$out/ranks$ranks.h5" 1
done
rm -rf "$out"
