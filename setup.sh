#!/usr/bin/env bash
# Installs what cflrun needs from Debian's packages (idempotent), then configures and builds a
# Release build in ./build (or $CFLRUN_BUILD_DIR). Safe to run again: installs only what is
# missing and rebuilds only what changed. Prints the seconds each stage took (packages, configure,
# build).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${CFLRUN_BUILD_DIR:-$here/build}"

packages=(
  g++ cmake make pkg-config git
  libtorch-dev libopenblas0-pthread
  libopenmpi-dev openmpi-bin
  libhdf5-dev hdf5-tools zlib1g-dev
  libboost-program-options-dev
  libnlopt-dev
  libgtest-dev
  dataset-fashion-mnist
  python3-h5py python3-matplotlib python3-numpy
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

stage_started=$SECONDS
# stage_done NAME: prints how long the stage NAME took and starts the clock for the next one.
stage_done() {
  echo "setup: stage $1 took $((SECONDS - stage_started)) s"
  stage_started=$SECONDS
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# LibTorch does its matrix work through libblas.so.3; the reference BLAS is about 4x slower here.
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)"
case "$blas" in
  */openblas*) echo "setup: BLAS in use: $blas" ;;
  *) echo "setup: warning: libblas.so.3 is $blas, not OpenBLAS; run: update-alternatives --config libblas.so.3-x86_64-linux-gnu" ;;
esac

stage_done packages

cmake -S "$here" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
stage_done configure
cmake --build "$build_dir" -j "$(nproc)"
stage_done build
echo "setup: built $build_dir/cflrun"
