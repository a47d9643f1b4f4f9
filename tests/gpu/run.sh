#!/usr/bin/env bash
# GPU checks and benchmark (issue 23), on a machine with an NVIDIA GPU and a CUDA LibTorch.
# 1. Builds the CUDA variant (setup.sh with -DCFLRUN_CUDA=ON into build-cuda) unless CFLRUN names
#    a built one.
# 2. The gpu checks (CTest label gpu runs this script with CFLRUN_GPU_BENCH=0): the tiny CLoVE run
#    on the GPU client-batched equals one client at a time on the GPU and on the CPU (same
#    assignments, accuracies within 1e-4 / 1e-3) and on 3 ranks sharing the GPU; the main job
#    (jobs/fmnist_label_skew1.cfg, 100 rounds) reaches ARI 1.0 from round 2 and accuracy >= 0.99 at
#    round 100 in fp32, and runs in tf32 and bf16 (their figures printed).
# 3. The benchmark: seconds per round and clients per second for the main job and 250 / 1 000 /
#    10 000 clients (label skew 1, 5 clusters, as many samples as the partition allows), client-
#    batched on the GPU, one client at a time on the GPU, and on the CPU cores (the default:
#    --parallel-clients over all cores). Prints one table (also to $OUT_DIR/table.txt).
# Usage: tests/gpu/run.sh [OUT_DIR]   (env: CFLRUN, CFLRUN_GPU_BENCH=0|1, CFLRUN_GPU_PYTHON)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
py="${CFLRUN_GPU_PYTHON:-python3}"
results() { LD_LIBRARY_PATH="${CFLRUN_GPU_SAVED_LD_LIBRARY_PATH-${LD_LIBRARY_PATH-}}" "$py" tests/gpu/results.py "$@"; }
if [ -z "${CFLRUN:-}" ]; then
  CFLRUN_BUILD_DIR=build-cuda CFLRUN_CMAKE_ARGS="-DCFLRUN_CUDA=ON -DCFLRUN_BUILD_TESTS=OFF" ./setup.sh
  CFLRUN=build-cuda/cflrun
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$CFLRUN" --version
failures=0
check() {
  local name="$1"
  shift
  if "$@"; then echo "gpu: ok   $name"; else echo "gpu: FAIL $name"; failures=$((failures + 1)); fi
}
run() {  # run NAME [cflrun options...]: a quiet run into $out/NAME.h5; a failure is counted, not fatal
  local name="$1"
  shift
  "$CFLRUN" --quiet --overwrite --checkpoint-every 0 --out "$out/$name.h5" "$@" ||
    { echo "gpu: FAIL run $name"; failures=$((failures + 1)); }
}

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
[ "${CFLRUN_GPU_BENCH:-1}" = 1 ] || exit $((failures > 0))

# clients: label-skew-1 options (5 clusters; per-client samples as the partition allows), rounds.
declare -A sizes=([25]="" [250]="--clients-per-cluster 50 --train-samples 240 --test-samples 40"
                  [1000]="--clients-per-cluster 200 --train-samples 60 --test-samples 10"
                  [10000]="--clients-per-cluster 2000 --train-samples 6 --test-samples 1")
declare -A bench_rounds=([25]=6 [250]=4 [1000]=3 [10000]=2)
table="$out/table.txt"
printf '%-8s %-22s %10s %11s %9s\n' clients mode "s/round" "clients/s" "GPU MiB" | tee "$table"
for clients in 25 250 1000 10000; do
  for mode in "gpu client-batched:--device cuda" "cpu $(nproc) cores:--device cpu" \
              "gpu one at a time:--device cuda --client-batch 1"; do
    name="bench_${clients}_$(echo "${mode%%:*}" | tr ' ' '_')"
    # The GPU's memory in use, sampled every 50 ms while the run lasts (its peak in the table).
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 > "$out/$name.memory" 2> /dev/null &
    sampler=$!
    # shellcheck disable=SC2086  # the options are words
    run "$name" --config jobs/fmnist_label_skew1.cfg ${sizes[$clients]} --rounds "${bench_rounds[$clients]}" ${mode#*:}
    kill "$sampler" 2> /dev/null || true
    seconds="$(results seconds "$out/$name.h5" || echo nan)"
    awk -v c="$clients" -v m="${mode%%:*}" -v s="$seconds" -v mib="$(sort -n "$out/$name.memory" | tail -n 1)" \
      'BEGIN { printf "%-8s %-22s %10.4f %11.0f %9s\n", c, m, s, c / s, mib }' | tee -a "$table"
  done
done
exit $((failures > 0))
