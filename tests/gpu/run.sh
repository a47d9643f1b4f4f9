#!/usr/bin/env bash
# GPU checks and benchmark (issue 23), on a machine with an NVIDIA GPU and a CUDA LibTorch.
# 1. Builds the CUDA variant with its gpu tests (setup.sh, -DCFLRUN_CUDA=ON -DCFLRUN_GPU_TESTS=ON,
#    into build-cuda) unless CFLRUN_GPU_BUILD names a built tree (device_env.sh's relocated one).
# 2. The gpu tests: `ctest -L gpu` there, the integration runs' twins with --device cuda and their
#    checks (tests/integration/CMakeLists.txt) and tests/gpu/checks.sh (gpu.checks).
# 3. Precision on the paper's cells: the Fashion-MNIST CLoVE cells of jobs/paper (seed 1, 100
#    rounds) in fp32, tf32 and bf16: final accuracy, final ARI, seconds per round (one table).
# 4. The benchmark: seconds per round and clients per second for the main job and 250 / 1 000 /
#    10 000 clients (label skew 1, 5 clusters, as many samples as the partition allows), client-
#    batched on the GPU, one client at a time on the GPU, and on the CPU cores (the default:
#    --parallel-clients over all cores). Prints one table (also to $OUT_DIR/table.txt).
# Usage: tests/gpu/run.sh [OUT_DIR]
#   env: CFLRUN_GPU_BUILD, CFLRUN_GPU_JOBS (ctest -j, 8), CFLRUN_GPU_PYTHON,
#        CFLRUN_GPU_TESTS=0|1, CFLRUN_GPU_PRECISION=0|1, CFLRUN_GPU_BENCH=0|1 (each part, default 1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
build="${CFLRUN_GPU_BUILD:-}"
if [ -z "$build" ]; then
  CFLRUN_BUILD_DIR=build-cuda CFLRUN_CMAKE_ARGS="-DCFLRUN_CUDA=ON -DCFLRUN_GPU_TESTS=ON" ./setup.sh
  build=build-cuda
fi
CFLRUN="${CFLRUN:-$build/cflrun}"
source tests/gpu/common.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$CFLRUN" --version

if [ "${CFLRUN_GPU_TESTS:-1}" = 1 ]; then
  started=$SECONDS
  ctest --test-dir "$build" -L gpu -j "${CFLRUN_GPU_JOBS:-8}" --output-on-failure > "$out/ctest.log" 2>&1 ||
    failures=$((failures + 1))
  sed -n '/tests passed/,$p' "$out/ctest.log"
  grep -hE '^(gpu:|main job|ARI by|accuracy at|assignments)' "$build/tests/gpu_checks/checks.log" || true
  echo "gpu: ctest -L gpu took $((SECONDS - started)) s (log: $out/ctest.log)"
fi

if [ "${CFLRUN_GPU_PRECISION:-1}" = 1 ]; then
  cells=(label_skew_1 label_skew_2 label_skew_3 label_skew_4 concept_shift feature_skew)
  for cell in "${cells[@]}"; do
    for precision in fp32 tf32 bf16; do
      run "cell_${cell}_$precision" --config "jobs/paper/fmnist_${cell}_clove.cfg" --device cuda \
        --precision "$precision" &
    done
    wait
  done
  printf '%-16s %-9s %9s %6s %9s\n' cell precision accuracy ARI "s/round" | tee "$out/precision.txt"
  for cell in "${cells[@]}"; do
    for precision in fp32 tf32 bf16; do
      printf '%-16s %-9s %s\n' "$cell" "$precision" "$(results final "$out/cell_${cell}_$precision.h5" || echo '?')"
    done
  done | tee -a "$out/precision.txt"
fi
[ "${CFLRUN_GPU_BENCH:-1}" = 1 ] || exit $((failures > 0))

# bench CLIENTS "MODE:OPTIONS" CFLRUN_OPTIONS...: one row of the table (the GPU's memory in use
# sampled every 50 ms while the run lasts; its peak in the table).
bench() {
  local clients="$1" mode="$2" name
  shift 2
  name="bench_${clients}_$(echo "${mode%%:*}" | tr ' ' '_')"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 > "$out/$name.memory" 2> /dev/null &
  local sampler=$!
  # shellcheck disable=SC2086  # the mode's options are words
  run "$name" "$@" ${mode#*:}
  kill "$sampler" 2> /dev/null || true
  local seconds; seconds="$(results seconds "$out/$name.h5" || echo nan)"
  awk -v c="$clients" -v m="${mode%%:*}" -v s="$seconds" -v mib="$(sort -n "$out/$name.memory" | tail -n 1)" \
    'BEGIN { printf "%-8s %-22s %10.4f %11.0f %9s\n", c, m, s, c / s, mib }' | tee -a "$table"
}

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
    # shellcheck disable=SC2086  # the options are words
    bench "$clients" "$mode" --config jobs/fmnist_label_skew1.cfg ${sizes[$clients]} --rounds "${bench_rounds[$clients]}"
  done
done
# The CIFAR CNN (batch norm, dropout; 4.2 M parameters) on stand-in CIFAR-10 files of the real
# format (tests/integration/tiny_cifar10.py): 50 clients of 100 samples, label skew 1.
[ -e "$out/cifar10/test_batch.bin" ] || device_python tests/integration/tiny_cifar10.py "$out/cifar10" 1000
for mode in "cifar gpu client-batched:--device cuda" "cifar cpu $(nproc) cores:--device cpu" \
            "cifar gpu one at a time:--device cuda --client-batch 1"; do
  bench 50 "$mode" --dataset cifar10 --data-dir "$out/cifar10" --partition label_skew_1 --clusters 5 \
    --clients-per-cluster 10 --train-samples 100 --test-samples 20 --batch-size 50 --rounds 3
done
exit $((failures > 0))
