#!/usr/bin/env bash
# Installs what cflrun needs: Debian's packages (MPI, HDF5, Boost, ...; as root or through sudo)
# and a pinned torch wheel from PyPI into the project-local virtual environment ./.venv (or
# $CFLRUN_VENV; no root), whose LibTorch cflrun links. Then configures and builds a Release build in
# ./build (or $CFLRUN_BUILD_DIR). Extra CMake options: $CFLRUN_CMAKE_ARGS (e.g. -DCFLRUN_CUDA=ON).
# Safe to run again: installs only what is missing and rebuilds only what changed. Prints the
# seconds each stage took (packages, torch, data, configure, build). The data stage installs the
# official MNIST into datasets/mnist unless that exists (datasets/get_mnist.sh).
# CFLRUN_SKIP_APT=1 skips the Debian packages (a cluster without root: see README, "On a cluster").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="${CFLRUN_BUILD_DIR:-$here/build}"
venv="${CFLRUN_VENV:-$here/.venv}"
torch_pin="torch==2.15.0"  # PyPI's Linux wheel: LibTorch 2.15.0 built for CUDA 13.2, CPU kernels in it

packages=(
  g++ cmake make pkg-config git curl ca-certificates
  libopenmpi-dev openmpi-bin
  libhdf5-dev hdf5-tools zlib1g-dev
  libboost-program-options-dev
  libnlopt-dev
  libhwy-dev
  libgtest-dev
  dataset-fashion-mnist
  python3-venv python3-h5py python3-matplotlib python3-numpy
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
if [ "${CFLRUN_SKIP_APT:-0}" != 1 ] && [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
stage_done packages

# The venv sees the system's packages (Debian's h5py, numpy and matplotlib for the benchmark and
# plot scripts); torch comes from PyPI, with the CUDA runtime libraries libtorch_cpu needs.
# Debian's python3 (a pyenv python3 may come first on PATH), or $CFLRUN_PYTHON (a cluster's module).
python="${CFLRUN_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '${torch_pin#torch==}')" 2>/dev/null; then
  echo "setup: installing $torch_pin from PyPI into $venv (about 3 GB with its CUDA libraries)"
  # Debian's pip 23.0 fails on the metadata of torch's CUDA dependencies (TypeError in the resolver).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "pip>=25"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$torch_pin"
fi
torch_prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
stage_done torch

# The official MNIST for --dataset mnist (datasets/mnist), checksums verified: from $CFLRUN_MNIST_FROM
# (a directory holding its four IDX files; default ../shared/datasets/mnist-full where that exists)
# or downloaded (datasets/get_mnist.sh). Without it cflrun runs everything but --dataset mnist.
mnist_from="${CFLRUN_MNIST_FROM:-}"
[ -n "$mnist_from" ] || [ ! -d "$here/../shared/datasets/mnist-full" ] || mnist_from="$here/../shared/datasets/mnist-full"
if [ ! -e "$here/datasets/mnist" ]; then
  "$here/datasets/get_mnist.sh" ${mnist_from:+--from "$mnist_from"} "$here/datasets/mnist" ||
    echo "setup: the official MNIST is not installed (see above); --dataset mnist needs it:" \
         "datasets/get_mnist.sh [--from DIR], or --data-dir"
fi
stage_done data

# shellcheck disable=SC2086  # CFLRUN_CMAKE_ARGS is a list of options
cmake -S "$here" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
  ${CFLRUN_CMAKE_ARGS:-} >/dev/null
stage_done configure
cmake --build "$build_dir" -j "$(nproc)"
stage_done build
echo "setup: built $build_dir/cflrun"
