#!/usr/bin/env bash
# Benchmark (not a test): CLoVE rounds with 100, 250, 500 and 1000 clients on one node, K = 5
# (label skew 1: classes {0,1}..{8,9}) and K = 10 (class_per_cluster: one class per cluster; label
# skew 1 has only 5 class pairs on Fashion-MNIST). Every client has 60 training and 10 test samples
# (1000 clients over K = 10 one-class pools of 6 000 / 1 000 images fit), so the work per round
# grows linearly in clients. Prints seconds per round (mean of the rounds after the first), the
# peak resident memory of each rank (getrusage via GNU time), and the bytes the server sent and
# received per round (the result file's /rounds/bytes_sent and bytes_received).
# Usage: tests/bench/scale.sh [ROUNDS=3] [RANKS=3] [BUILD_DIR=build] [CLIENT_COUNTS="100 250 500 1000"]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds="${1:-3}"
ranks="${2:-3}"
build="${3:-build}"
client_counts="${4:-100 250 500 1000}"
python=/usr/bin/python3  # Debian's, with h5py (a pyenv python3 may come first on PATH)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
launcher=()
[ "$ranks" -gt 1 ] && launcher=(mpiexec -n "$ranks" --oversubscribe)

printf '%8s %4s %6s %10s %22s %12s %12s\n' clients K ranks "s/round" "peak RSS/rank MiB" "total MiB" "MiB/round"
for k in 5 10; do
  partition=label_skew_1
  [ "$k" -eq 10 ] && partition=class_per_cluster
  for clients in $client_counts; do
    run="$work/k${k}_c${clients}"
    # each rank under GNU time, writing its peak RSS (KiB) to $run.rss.<rank>
    "${launcher[@]}" sh -c '/usr/bin/time -f %M -o "$0.rss.${OMPI_COMM_WORLD_RANK:-0}" "$@"' "$run" \
      "$build/cflrun" --config jobs/fmnist_label_skew1.cfg --partition "$partition" --clusters "$k" \
      --clients-per-cluster $((clients / k)) --train-samples 60 --test-samples 10 --rounds "$rounds" \
      --checkpoint-every 0 --quiet --out "$run.h5" > "$run.log" 2>&1 ||
      { echo "scale: $clients clients, K = $k failed:" >&2; cat "$run.log" >&2; exit 1; }
    "$python" - "$run" "$clients" "$k" "$ranks" <<'PY'
import glob, sys, h5py
run, clients, k, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rss = [int(open(p).read().split()[-1]) / 1024 for p in sorted(glob.glob(run + ".rss.*"))]
with h5py.File(run + ".h5", "r") as f:
    seconds = f["rounds/seconds"][()].sum(1)
    moved = f["rounds/bytes_sent"][()] + f["rounds/bytes_received"][()]
later = seconds[1:] if len(seconds) > 1 else seconds
per_rank = "/".join(f"{r:.0f}" for r in rss)
print(f"{clients:8d} {k:4d} {ranks:6d} {later.mean():10.3f} {per_rank:>22s} {sum(rss):12.0f} {moved.mean() / 2**20:12.2f}")
PY
  done
done
