#!/usr/bin/env bash
# Issue 42's GPU measurements in one call on the lent GPU machine (carry .gpu-bundle from
# tests/gpu/bundle.sh and the folder of MANIFEST):
# 1. section 2 of tests/gpu/issue42.sh: a CLoVE round at 1 000 and 10 000 clients, cflrun
#    client-batched (auto and every client in one batch, with its phases) against
#    tests/bench/torchfunc_round.py on the same GPU;
# 2. MANIFEST (jobs/paper/sweep.sh; the Fashion-MNIST third of Tables 1-2 is 12 algorithms x 4
#    partitions x 3 seeds x 100 rounds) through tests/gpu/sweep.sh, 16 runs at once under MPS,
#    until TOTAL_SECONDS after this script's start less the time packing takes;
# 3. the rounds every run of MANIFEST reached (complete files, or the .partial file of a run
#    stopped at the deadline) and its mean seconds per round.
# Writes to $OUT (default ./issue42-out): issue42.txt (section 1), progress.txt (section 3) and
# sweep.sh's files (results.tar.xz, runs.tsv, gpu.txt, gpu_samples.csv, unfinished_logs.tar.xz).
# Usage: tests/gpu/issue42_table.sh MANIFEST TOTAL_SECONDS [ROUNDS_AT_SCALE=4]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
manifest=$1 total=$2 rounds=${3:-4}
out="${OUT:-$PWD/issue42-out}"
mkdir -p "$out"
started=$SECONDS
# shellcheck source=device_env.sh
source tests/gpu/device_env.sh || exit 1
CFLRUN="$(command -v cflrun)"
export CFLRUN
status=0
tests/gpu/issue42.sh /tmp/issue42-scale "$rounds" 2 || status=1
cp /tmp/issue42-scale/issue42.txt "$out/"
echo "issue42_table: scale section done at $((SECONDS - started)) s"

kPackingSeconds=40
OUT="$out" tests/gpu/sweep.sh "$manifest" "$((total - (SECONDS - started) - kPackingSeconds))" ||
  status=1
echo "issue42_table: sweep done at $((SECONDS - started)) s"

mapfile -t files < <(sed -n 's/.*--out \([^ ]*\).*/\1/p' "$manifest" |
  while read -r f; do if [ -f "$f" ]; then echo "$f"; elif [ -f "$f.partial" ]; then echo "$f.partial"; fi; done)
LD_LIBRARY_PATH="${CFLRUN_GPU_SAVED_LD_LIBRARY_PATH-${LD_LIBRARY_PATH-}}" python3 tests/gpu/results.py \
  progress "${files[@]}" > "$out/progress.txt" 2>&1
echo "issue42_table: $(grep -c '^ 100 rounds' "$out/progress.txt") of $(grep -cv '^\s*\(#\|$\)' "$manifest") runs complete; done at $((SECONDS - started)) s"
exit "$status"
