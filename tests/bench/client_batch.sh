#!/usr/bin/env bash
# Benchmark (not a test): seconds per round of paper configs with their clients one at a time
# (--client-batch 1) and client-batched (--client-batch N, default every client of the run),
# alternating the two REPEATS times in one call so that both see the same machine; each line is
# round_time_summary's mean over the rounds after the first, then its phase split.
# Usage: tests/bench/client_batch.sh [ROUNDS=3] [REPEATS=2] [BATCH=0 (all clients)] [CONFIG...]
# Defaults: the Fashion-MNIST concept-shift configs of Per-FedAvg, FedProto, FedALA and FedPAC
# (jobs/paper, PFLlib's FedAvgCNN, batch 10) and of CLoVE and CFL (the small CNN, batch 100).
# Environment: CFLRUN (default build/cflrun), THREADS (default 2), DEVICE (default cpu).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds="${1:-3}"
repeats="${2:-2}"
batch="${3:-0}"
shift $(( $# < 3 ? $# : 3 ))
configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
  for algorithm in perfedavg fedproto fedala fedpac clove cfl; do
    configs+=("jobs/paper/fmnist_concept_shift_$algorithm.cfg")
  done
fi
cflrun="${CFLRUN:-build/cflrun}"
summary="$(dirname "$cflrun")/tests/bench/round_time_summary"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "threads ${THREADS:-2}; device ${DEVICE:-cpu}; $("$cflrun" --version | head -1)"
for config in "${configs[@]}"; do
  name="$(basename "$config" .cfg)"
  clients="$(grep -E '^clusters|^clients-per-cluster' "$config" | awk '{p = p ? p * $3 : $3} END {print p}')"
  n="$batch"
  [ "$n" -eq 0 ] && n="$clients"
  for r in $(seq 1 "$repeats"); do
    for b in 1 "$n"; do
      "$cflrun" --config "$config" --rounds "$rounds" --client-batch "$b" --threads "${THREADS:-2}" \
        --device "${DEVICE:-cpu}" --checkpoint-every 0 --quiet --overwrite \
        --out "$out/$name.$b.$r.h5" >/dev/null
      printf '%-36s client-batch %-3s repeat %s: ' "$name" "$b" "$r"
      "$summary" "$out/$name.$b.$r.h5" 1 |
        awk '/^  round /{r = $2} /%$/ && !/outside/ {p = p sprintf(" %s %s", $1, $2)}
             END {printf "%s s/round;%s\n", r, p}'
    done
  done
done
