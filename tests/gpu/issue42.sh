#!/usr/bin/env bash
# Issue 42's GPU measurements, one call on a machine with an NVIDIA GPU (the lent machine: after
# `source tests/gpu/device_env.sh`, CFLRUN naming the CUDA variant). Prints three tables (also to
# $OUT_DIR/issue42.txt):
# 1. The personalised paper configs (Per-FedAvg, FedProto, FedALA, FedPAC, Fashion-MNIST concept
#    shift) and CLoVE's, one client at a time against client-batched on the GPU, alternating:
#    seconds per round (mean of the rounds after the first) and final accuracy.
# 2. A CLoVE round at 1 000 and 10 000 clients (tests/bench/scale.sh's shapes, class per cluster,
#    K = 10), cflrun client-batched against tests/bench/torchfunc_round.py, in the same call.
# 3. 16 CLoVE paper runs of 30 rounds one after another, 16 at once, and 16 at once under NVIDIA
#    MPS (jobs/slurm/run_manifest.py, jobs/slurm/mps.sh): wall seconds and runs per minute.
#    Section 2 runs cflrun twice: --client-batch auto (at most kGpuClientBatch clients at once) and
#    every client in one batch, and prints each run's phases.
# Usage: tests/gpu/issue42.sh [OUT_DIR] [ROUNDS=4] [SECTIONS="1 2 3"]   env: CFLRUN, CFLRUN_GPU_PYTHON
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:-$(mktemp -d)}"
rounds="${2:-4}"
sections=" ${3:-1 2 3} "
mkdir -p "$out"
source tests/gpu/common.sh
table="$out/issue42.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$table" || true
"$CFLRUN" --version | head -3 | tee -a "$table"

if [[ $sections == *" 1 "* ]]; then
echo "== 1. personalised rows: one at a time vs client-batched (s/round, final accuracy)" | tee -a "$table"
for algorithm in perfedavg fedproto fedala fedpac clove; do
  for repeat in 1 2; do
    for batch in 1 0; do
      name="row_${algorithm}_${batch}_$repeat"
      run "$name" --config "jobs/paper/fmnist_concept_shift_$algorithm.cfg" --device cuda \
        --client-batch "$batch" --rounds "$rounds"
      printf '%-10s %-14s repeat %s  %s\n' "$algorithm" \
        "$([ "$batch" = 1 ] && echo one-at-a-time || echo client-batched)" "$repeat" \
        "$(results final "$out/$name.h5" || echo '?')" | tee -a "$table"
    done
  done
done

fi

if [[ $sections == *" 2 "* ]]; then
echo "== 2. CLoVE rounds at scale: cflrun client-batched vs torch.func (s/round)" | tee -a "$table"
declare -A per_cluster=([1000]=100 [10000]=1000)
declare -A train=([1000]=60 [10000]=6)
declare -A test=([1000]=10 [10000]=1)
for clients in 1000 10000; do
  for batch in 0 "$clients"; do
    name="scale_${clients}_$batch"
    run "$name" --config jobs/fmnist_label_skew1.cfg --partition class_per_cluster --clusters 10 \
      --clients-per-cluster "${per_cluster[$clients]}" --train-samples "${train[$clients]}" \
      --test-samples "${test[$clients]}" --rounds "$rounds" --device cuda --client-batch "$batch"
    printf 'cflrun    %6s clients, client batch %-6s %s\n' "$clients" \
      "$([ "$batch" = 0 ] && echo auto || echo all)" "$(results phases "$out/$name.h5" || echo '?')" |
      tee -a "$table"
  done
  device_python tests/bench/torchfunc_round.py --clients "$clients" --train "${train[$clients]}" \
    --test "${test[$clients]}" --clusters 10 --rounds "$rounds" --device cuda | tail -n 1 |
    tee -a "$table"
done
fi

if [[ $sections == *" 3 "* ]]; then
echo "== 3. 16 CLoVE paper runs of 30 rounds: one after another, 16 at once, 16 at once under MPS" | tee -a "$table"
manifest="$out/packed.txt"
: > "$manifest"
for seed in $(seq 1 16); do
  echo "--config jobs/paper/fmnist_label_skew_1_clove.cfg --rounds 30 --seed $seed --quiet --overwrite --out $out/packed_$seed.h5" >> "$manifest"
done
packed() {  # packed NAME SLOTS: the manifest with SLOTS runs at once; one row of the table
  local started=$SECONDS seconds
  rm -f "$out"/packed_*.h5
  device_python jobs/slurm/run_manifest.py "$manifest" --cflrun "$CFLRUN" --slots "$2" \
    --deadline 3000 --extra "--device cuda --threads 1 --checkpoint-every 0" \
    --log "$out/packed_$1.tsv" > /dev/null || failures=$((failures + 1))
  seconds=$((SECONDS - started))
  awk -v n="$1" -v t="$seconds" 'BEGIN { printf "%-22s %5d s, %.1f runs/min\n", n, t, 16 * 60 / t }' |
    tee -a "$table"
}
packed "one after another" 1
packed "16 at once" 16
# shellcheck source=../../jobs/slurm/mps.sh
source jobs/slurm/mps.sh
if mps_start run mps_probe --config jobs/paper/fmnist_label_skew_1_clove.cfg --rounds 1 --device cuda; then
  packed "16 at once under MPS" 16
  mps_stop
else
  echo "MPS did not start" | tee -a "$table"
fi
fi
exit $((failures > 0))
