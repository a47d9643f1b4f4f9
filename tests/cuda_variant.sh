#!/usr/bin/env bash
# Builds the CUDA variant of cflrun (-DCFLRUN_CUDA=ON, without the tests) in BUILD_DIR against
# setup.sh's LibTorch and its CUDA libraries (no CUDA toolkit needed), checks that it links
# libtorch_cuda and names its CUDA version, and runs a tiny CLoVE experiment with --device auto
# (the CPU where there is no GPU) to ARI 1, one client at a time and client-batched.
# Usage: tests/cuda_variant.sh [BUILD_DIR=build-cuda]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build-cuda}"
fail() { echo "cuda_variant: FAIL: $*" >&2; exit 1; }
CFLRUN_BUILD_DIR="$build" CFLRUN_CMAKE_ARGS="-DCFLRUN_CUDA=ON -DCFLRUN_BUILD_TESTS=OFF" ./setup.sh
version="$("$build/cflrun" --version)"
echo "$version"
grep -q "^CUDA [0-9]" <<< "$version" || fail "--version does not name a CUDA version"
ldd "$build/cflrun" | grep "libtorch_cuda.so" > /dev/null || fail "$build/cflrun does not link libtorch_cuda"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$build/cflrun" --config tests/integration/tiny_clove.cfg --rounds 3 --device auto --out "$out/tiny.h5" | tee "$out/log.txt"
grep -q "on cpu ->" "$out/log.txt" || nvidia-smi > /dev/null 2>&1 || fail "--device auto chose a GPU on a machine without one"
grep -Eq "^round +3/3 +ARI 1\.000" "$out/log.txt" || fail "the tiny CLoVE run did not reach ARI 1 by round 3"
# The client-batched local updates (--client-batch, the GPU default) on the CPU path of this variant.
"$build/cflrun" --config tests/integration/tiny_clove.cfg --rounds 3 --device auto --client-batch 4 \
  --out "$out/batched.h5" | tee "$out/batched.txt"
grep -Eq "^round +3/3 +ARI 1\.000" "$out/batched.txt" || fail "the client-batched tiny run did not reach ARI 1 by round 3"
echo "cuda_variant: built and ran the CUDA variant in $build"
