#!/usr/bin/env bash
# The gpu checks beyond the integration runs' twins (CTest gpu.checks, label gpu; issue 23), on a
# machine with an NVIDIA GPU, for the CUDA variant that $CFLRUN names:
#   - the tiny CLoVE run client-batched on the GPU equals one client at a time on the GPU and on
#     the CPU (same assignments, accuracies within 1e-4 / 1e-3) and 3 ranks sharing the GPU;
#   - the main job (jobs/fmnist_label_skew1.cfg, 100 rounds) reaches ARI 1.0 from round 2 and
#     accuracy >= 0.99 at round 100 in fp32, and runs in tf32 and bf16 (their figures printed).
# Usage: CFLRUN=build-cuda/cflrun tests/gpu/checks.sh OUT_DIR   (env: CFLRUN_GPU_PYTHON)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source tests/gpu/common.sh
out="${1:?usage: checks.sh OUT_DIR}"
mkdir -p "$out"
exec > >(tee "$out/checks.log") 2>&1  # its figures, for run.sh to print

tiny=(--config tests/integration/tiny_clove.cfg --rounds 5)
run tiny_cpu "${tiny[@]}" --device cpu --client-batch 1 --threads 1
run tiny_gpu_one "${tiny[@]}" --device cuda --client-batch 1
run tiny_gpu_batched "${tiny[@]}" --device cuda
mpirun -np 3 --oversubscribe "$CFLRUN" --quiet --overwrite --checkpoint-every 0 --out "$out/tiny_gpu_3ranks.h5" \
  "${tiny[@]}" --device cuda || { echo "gpu: FAIL run tiny_gpu_3ranks"; failures=$((failures + 1)); }
check tiny_gpu_batched_vs_one_at_a_time results same "$out/tiny_gpu_one.h5" "$out/tiny_gpu_batched.h5" 1e-4
check tiny_gpu_vs_cpu results same "$out/tiny_cpu.h5" "$out/tiny_gpu_batched.h5" 1e-3
check tiny_gpu_3ranks_vs_1rank results same "$out/tiny_gpu_batched.h5" "$out/tiny_gpu_3ranks.h5" 1e-3
for precision in fp32 tf32 bf16; do
  run "main_$precision" --config jobs/fmnist_label_skew1.cfg --device cuda --precision "$precision"
  echo "main job, --precision $precision: $(results seconds "$out/main_$precision.h5" || echo '?') s per round"
done
check main_job_ari_1_from_round_2 results ari-from "$out/main_fp32.h5" 2
check main_job_accuracy_at_round_100 results accuracy-at "$out/main_fp32.h5" 100 0.99
for precision in tf32 bf16; do
  results ari-from "$out/main_$precision.h5" 2 || true
  results accuracy-at "$out/main_$precision.h5" 100 0.99 || true
done
echo "gpu: $failures check(s) failed"
exit $((failures > 0))
