#!/usr/bin/env bash
# Builds the CUDA variant of cflrun (the target cflrun_cuda: the objects of BUILD_DIR's CPU
# variant linked with LibTorch's CUDA libraries, the wheel's; no CUDA toolkit needed) as
# BUILD_DIR/cuda/cflrun, checks that it links libtorch_cuda and names its CUDA version while the
# CPU variant says it is one, and runs a tiny CLoVE experiment with --device auto (the CPU where
# there is no GPU) to ARI 1, one client at a time and client-batched.
# Usage: tests/cuda_variant.sh [BUILD_DIR=build]   (a configured build tree, e.g. setup.sh's)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
fail() { echo "cuda_variant: FAIL: $*" >&2; exit 1; }
cmake --build "$build" --target cflrun_cuda -j "$(nproc)"
variant="$build/cuda/cflrun"
version="$("$variant" --version)"
echo "$version"
grep -q "^CUDA [0-9]" <<< "$version" || fail "--version does not name a CUDA version"
ldd "$variant" | grep "libtorch_cuda.so" > /dev/null || fail "$variant does not link libtorch_cuda"
if [ -x "$build/cflrun" ] && ! ldd "$build/cflrun" | grep -q "libtorch_cuda.so"; then
  "$build/cflrun" --version | grep -q "^CUDA none (CPU variant" || fail "the CPU variant does not say it is one"
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$variant" --config tests/integration/tiny_clove.cfg --rounds 3 --device auto --out "$out/tiny.h5" | tee "$out/log.txt"
grep -Eq " on cpu(,| ->)" "$out/log.txt" || nvidia-smi > /dev/null 2>&1 || fail "--device auto chose a GPU on a machine without one"
grep -Eq "^round +3/3 +ARI 1\.000" "$out/log.txt" || fail "the tiny CLoVE run did not reach ARI 1 by round 3"
# The client-batched local updates (--client-batch, the GPU default) on the CPU path of this variant.
"$variant" --config tests/integration/tiny_clove.cfg --rounds 3 --device auto --client-batch 4 \
  --out "$out/batched.h5" | tee "$out/batched.txt"
grep -q " on cpu, clients client-batched" "$out/batched.txt" || nvidia-smi > /dev/null 2>&1 \
  || fail "the --client-batch run does not say its clients run client-batched on the CPU"
grep -Eq "^round +3/3 +ARI 1\.000" "$out/batched.txt" || fail "the client-batched tiny run did not reach ARI 1 by round 3"
echo "cuda_variant: built and ran the CUDA variant $variant"
