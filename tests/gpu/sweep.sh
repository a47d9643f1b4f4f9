#!/usr/bin/env bash
# Runs a sweep manifest on the lent GPU machine, which has no SLURM: the runs go side by side on
# its GPU (--device cuda, one thread each) through jobs/slurm/run_manifest.py, under the NVIDIA
# Multi-Process Service where it starts (one GPU context for all processes, so their small kernels
# overlap instead of time-slicing), until a deadline; the complete result files come back packed.
#
#   tests/gpu/sweep.sh MANIFEST DEADLINE_S [run_manifest.py options...]
#
# Carry .gpu-bundle (tests/gpu/bundle.sh) and the manifest. Writes to $OUT (default ./gpu-sweep-out):
# results.tar.xz (every complete *.h5 under the manifest's --out paths; split into 15 MiB parts
# results.tar.xz.part-aa, -ab, ... when larger), runs.tsv (run_manifest.py's log) and gpu.txt
# (nvidia-smi, whether MPS ran), gpu_samples.csv (GPU utilisation and memory every 15 s), unfinished_logs.tar.xz (the output of runs that failed or were
# stopped). Unpack here with
#   cat results.tar.xz* | tar -xJf - -C /path/to/repo
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
manifest=$1 deadline=$2
shift 2
out="${OUT:-$PWD/gpu-sweep-out}"
mkdir -p "$out"
started=$SECONDS
# shellcheck source=device_env.sh
source tests/gpu/device_env.sh || exit 1

probe() {  # one round of a small config on the GPU
  timeout 120 cflrun --config jobs/paper/fmnist_label_skew_1_clove.cfg --rounds 1 --device cuda \
    --threads 1 --quiet --out /tmp/gpu-sweep-probe/probe$1.h5 > /tmp/gpu-sweep-probe/probe$1.log 2>&1
}
rm -rf /tmp/gpu-sweep-probe && mkdir -p /tmp/gpu-sweep-probe  # a warm machine keeps the last call's probe files
mps=off
# shellcheck source=../../jobs/slurm/mps.sh
source jobs/slurm/mps.sh
# on: the probe ran and an MPS server serves this GPU (CUDA falls back to no MPS without one)
if mps_start probe 1; then
  mps=on
fi
if [ "$mps" = off ] && ! probe 2; then
  echo "sweep: cflrun does not run on the GPU:" >&2
  cat /tmp/gpu-sweep-probe/*.log >&2
  exit 1
fi
{ nvidia-smi -L; echo "MPS: $mps"; nproc; } | tee "$out/gpu.txt"
echo "sweep: set up in $((SECONDS - started)) s; running until $deadline s"

nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 > "$out/gpu_samples.csv" &
sampler=$!
python3 jobs/slurm/run_manifest.py "$manifest" --deadline "$((deadline - (SECONDS - started)))" \
  --extra "--device cuda --threads 1 --quiet --skip-complete" --log "$out/runs.tsv" \
  --run-logs /tmp/gpu-sweep-logs "$@"
status=$?
kill "$sampler"
# The output of every run that did not end ok (failed or stopped at the deadline).
awk -F'\t' 'NR > 1 && $2 != "ok" && $2 != "not started" && $2 != "skipped" {printf "run%04d.log\n", $1}' "$out/runs.tsv" \
  > /tmp/gpu-sweep-failed
[ -s /tmp/gpu-sweep-failed ] && tar -C /tmp/gpu-sweep-logs -cJf "$out/unfinished_logs.tar.xz" -T /tmp/gpu-sweep-failed
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv >> "$out/gpu.txt"

# The complete result files (no .partial, .checkpoint or .lock) of the manifest's --out paths.
sed -n 's/.*--out \([^ ]*\).*/\1/p' "$manifest" | while read -r f; do [ -f "$f" ] && echo "$f"; done \
  > /tmp/gpu-sweep-files
XZ_OPT=-T0 tar -cJf "$out/results.tar.xz" -T /tmp/gpu-sweep-files
if [ "$(stat -c %s "$out/results.tar.xz")" -gt $((15 * 1024 * 1024)) ]; then
  split -b 15M "$out/results.tar.xz" "$out/results.tar.xz.part-" && rm "$out/results.tar.xz"
fi
echo "sweep: $(wc -l < /tmp/gpu-sweep-files) result files packed in $((SECONDS - started)) s"
exit $status
