#!/usr/bin/env bash
# Prepares, on this Debian 12 machine, what the CUDA variant of cflrun needs on the lent GPU
# machine, which has torch 2.11.0+cu130 (LibTorch + CUDA libraries), cmake and ninja but no
# Open MPI, HDF5, Boost, NLopt or datasets, and cannot reach the network.
#   build-gpu/          cflrun's CUDA variant (-DCFLRUN_CUDA=ON) built against torch 2.11.0's
#                       LibTorch, so its C++ symbols match the device's libtorch (not carried),
#                       configured with the gpu tests (-DCFLRUN_GPU_TESTS=ON); cflrun and
#                       check_results built.
#   .gpu-bundle/        what is carried (about 45 MiB):
#     runtime.tar.xz    bin/ (cflrun, check_results, mpirun, orted, ompi_info), lib/ (the closure
#                       minus glibc, libstdc++, libgcc_s and torch/CUDA), Open MPI 4.1.4's and
#                       PMIx's plugins, help and config files, from Debian's packages; ctest/
#                       (build-gpu's CTest files, which device_env.sh relocates); xz because
#                       unpacked it would not fit beside the data in the 64 MiB a call may carry
#     data/             Fashion-MNIST and MNIST (IDX .gz files)
# tests/gpu/device_env.sh unpacks and sets it up on the device (see its header).
# Usage: tests/gpu/bundle.sh  (re-runnable; rebuilds only what changed)
#   CFLRUN_GPU_CMAKE_ARGS  extra CMake options, after -DCFLRUN_GPU_TESTS=ON (may override it)
#   CFLRUN_GPU_BUNDLE_BINS more executables of build-gpu/ to put in bin/ (space-separated)
#   CFLRUN_TORCH_CACHE     where torch 2.11.0's wheel is downloaded and unpacked (../torch211)
#   CFLRUN_GPU_SIMULATE=0  skips the simulated device run at the end (needs root for unshare)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$PWD
cache="$(realpath -m "${CFLRUN_TORCH_CACHE:-$(dirname "$repo")/torch211}")"
torch="$cache/sp/torch"       # the unpacked torch/ of the wheel (include, lib, share)
stage="$repo/build-gpu/bundle-stage"
bundle="$repo/.gpu-bundle"
ompi_plugins=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
pmix2=/usr/lib/x86_64-linux-gnu/pmix2
started=$SECONDS
step() { echo "bundle: [$((SECONDS - started)) s] $*"; }

# Keep both outputs out of git's view (/build*/ is in .gitignore already).
for p in /.gpu-bundle/ /build-gpu/; do
  grep -qxF "$p" .git/info/exclude 2>/dev/null || echo "$p" >> .git/info/exclude
done

# 1. torch 2.11.0's wheel (CPython 3.12 like the device's; its C++ libraries do not depend on it).
if [ ! -f "$torch/share/cmake/Torch/TorchConfig.cmake" ]; then
  step "downloading torch 2.11.0 into $cache"
  mkdir -p "$cache/sp"
  pip="$(ls "$repo"/.venv/bin/pip 2>/dev/null || echo pip3)"
  "$pip" download --quiet --no-deps torch==2.11.0 --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --only-binary=:all: -d "$cache"
  unzip -q -o "$cache"/torch-2.11.0-*.whl 'torch/include/*' 'torch/share/*' 'torch/lib/*' \
    'torch/version.py' -d "$cache/sp"
fi
step "torch wheel: $(sed -n "s/^__version__ = //p" "$torch/version.py"), CUDA $(sed -n "s/^cuda[^=]*= //p" "$torch/version.py")"
# libtorch_cuda's CUDA libraries (cudart.so.13, cublas.so.13, ...) are only needed to link here:
# the main venv's CUDA 13.2 libraries have the same SONAMEs as the wheel's 13.0 ones. (That venv
# has no libcurand.so.10, which torch 2.11 also needs: the linker finds it in /usr/local/cuda-13.0
# here; elsewhere install the cu13 curand wheel into that venv.)
if [ ! -e "$cache/sp/nvidia" ]; then
  nvidia="$(ls -d "$repo"/.venv/lib/python3*/site-packages/nvidia | sed -n 1p)"
  ln -s "$nvidia" "$cache/sp/nvidia"
fi
nvidia_real="$(realpath "$cache/sp/nvidia")"

# 2. The CUDA variant against it.
# shellcheck disable=SC2086  # CFLRUN_GPU_CMAKE_ARGS is a list of options
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCFLRUN_CUDA=ON -DCMAKE_PREFIX_PATH="$torch/share/cmake" \
  -DCFLRUN_BUILD_TESTS=ON -DCFLRUN_GPU_TESTS=ON ${CFLRUN_GPU_CMAKE_ARGS:-} > /dev/null
cmake --build build-gpu -j "$(nproc)" --target cflrun check_results
step "built build-gpu/cflrun"

# 3. The runtime tree, staged in build-gpu/bundle-stage.
rm -rf "$stage"
mkdir -p "$stage"/{bin,lib,openmpi/lib/openmpi3,pmix2/lib/pmix,share,etc,ctest}
for b in cflrun tests/integration/check_results ${CFLRUN_GPU_BUNDLE_BINS:-}; do cp build-gpu/"$b" "$stage/bin/"; done
# The CTest files of build-gpu (the gpu tests; device_env.sh points their paths at the device's),
# and the directories the tests write into.
(cd build-gpu && find . -name CTestTestfile.cmake -exec cp --parents {} "$stage/ctest/" \; &&
  find . -path ./bundle-stage -prune -o -type d -name gpu -exec mkdir -p "$stage/ctest/{}" \;)
echo "$repo" > "$stage/ctest/source_dir"
for b in orterun orted ompi_info; do cp /usr/bin/$b "$stage/bin/"; done
cp /usr/bin/orterun "$stage/bin/mpirun"    # real files, no links: /usr/bin/mpirun is orterun
cp /usr/bin/orterun "$stage/bin/mpiexec"
cp -rL /usr/share/openmpi "$stage/share/"
cp -rL /etc/openmpi "$stage/etc/"
cp -rL "$pmix2/share" "$stage/pmix2/"
cp "$pmix2"/lib/pmix/*.so "$stage/pmix2/lib/pmix/"

# resolved FILE...: "SONAME PATH" for each library ldd resolves (with this shell's environment).
resolved() { { ldd "$@" 2> /dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'; }
# Libraries the device has: glibc, libstdc++, libgcc_s, and torch's and CUDA's.
# (By name too: ldd may find a CUDA library elsewhere here, e.g. libcurand in /usr/local/cuda.)
system_re='^(libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s)\.so|^ld-linux'
cuda_re='^(libtorch|libc10|libcaffe2|libgomp|libcuda\.|libcudart|libcublas|libcufft|libcufile|libcurand|libcusolver|libcusparse|libcupti|libcudnn|libnv|libnccl)'
provided() {  # provided SONAME PATH
  local real; real="$(realpath "$2")"
  [[ $1 =~ $system_re || $1 =~ $cuda_re || $real == "$cache"/sp/* || $real == "$nvidia_real"/* ]]
}
# Plugins for InfiniBand, Omni-Path, libfabric, UCX and OpenSHMEM: their libraries are large and
# of no use on one node. (reachable_netlink needs libnl; reachable_weighted does the same job.)
skip_re='^(libuc[pmst]|libfabric|libibverbs|libpsm|libinfinipath|librdmacm|libefa|liboshmem|libnl-|libnuma|libmca_common_(ucx|ofi|verbs))'
left_out=()
for p in "$ompi_plugins"/*.so; do
  why="$(resolved "$p" | awk -v re="$skip_re" '$1 ~ re {print $1}' | tr '\n' ' ')"
  if [ -n "$why" ]; then left_out+=("$(basename "$p" .so) (${why% })"); else cp "$p" "$stage/openmpi/lib/openmpi3/"; fi
done
step "left out ${#left_out[@]} Open MPI plugins: ${left_out[*]}"

# The closure: every library that the binaries and plugins load, under its SONAME, real files.
mapfile -t elves < <(find "$stage/bin" "$stage/openmpi" "$stage/pmix2" -type f \( -perm -u+x -o -name '*.so' \))
while read -r soname path; do
  provided "$soname" "$path" || cp -L "$path" "$stage/lib/$soname"
done < <(resolved "${elves[@]}" | sort -u)

# Check: with LD_LIBRARY_PATH=lib (and torch's lib), everything resolves inside the bundle, to
# torch/CUDA, or to glibc/libstdc++/libgcc_s: nothing else from this machine, nothing missing.
bad=0
for f in "${elves[@]}" "$stage"/lib/*; do
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = not ]; then echo "bundle: $f: $soname not found"; bad=1
    elif [[ $path != "$stage"/lib/* ]] && ! provided "$soname" "$path"; then
      echo "bundle: $f: $soname resolves outside the bundle: $path"; bad=1
    fi
  done < <(env -i LD_LIBRARY_PATH="$stage/lib:$torch/lib" ldd "$f" 2> /dev/null || true)
done
[ "$bad" = 0 ] || { echo "bundle: FAIL: the closure is incomplete" >&2; exit 1; }
# newest VERSION: the newest glibc/libstdc++ symbol version that the bundle's files ask for.
newest() { { objdump -T "${elves[@]}" "$stage"/lib/* 2> /dev/null || true; } | { grep -o "$1" || true; } | sort -uV | sed -n '$p'; }
glibc="$(newest 'GLIBC_2\.[0-9]*')"
glibcxx="$(newest 'GLIBCXX_3\.4\.[0-9]*')"
step "closure complete: $(ls "$stage/lib" | wc -l) libraries; needs $glibc and $glibcxx on the device"

# 4. Pack it; the data beside it.
mkdir -p "$bundle/data"
tar -C "$stage" --owner=0 --group=0 --sort=name --mtime=@1577836800 -cf - . | xz -6 -T "$(nproc)" > "$bundle/runtime.tar.xz.tmp"
mv "$bundle/runtime.tar.xz.tmp" "$bundle/runtime.tar.xz"
cp -rLu /usr/share/datasets/fashion-mnist "$bundle/data/"
cp -rLu "$(dirname "$repo")/shared/datasets/mnist-full" "$bundle/data/"  # the official MNIST
chmod -R u+w "$bundle/data"
step "packed $bundle"
for p in build-gpu build-gpu/cflrun "$stage" "$stage"/* "$bundle/runtime.tar.xz" "$bundle"/data/* "$bundle"; do
  du -sh "$p"
done

# 5. Simulate the device, in a private mount namespace (root): overlays (thrown away at the end)
# over /usr/lib/x86_64-linux-gnu, /usr/share, /etc and the repository, from which Debian's Open
# MPI, PMIx, Fashion-MNIST and every library the bundle holds are deleted; then a clean
# environment sources device_env.sh (which points Open MPI and PMIx at the runtime, as on the
# device) and runs its check with this wheel's torch 2.11 libraries as the device's torch.
if [ "${CFLRUN_GPU_SIMULATE:-1}" = 1 ]; then
  # shellcheck disable=SC2016  # the single-quoted script expands in the inner bash
  unshare -m --propagation private env -i PATH=/usr/bin:/bin HOME=/tmp REPO="$repo" \
    STAGE="$stage" CFLRUN_GPU_RUNTIME=/tmp/cflrun-gpu-sim CFLRUN_GPU_TORCH_LIB="$torch/lib" bash -c '
    set -euo pipefail
    scratch=$(mktemp -d) && mount -t tmpfs none "$scratch"
    for d in /usr/lib/x86_64-linux-gnu /usr/share /etc "$REPO"; do
      mkdir -p "$scratch/u$d" "$scratch/w$d"
      mount -t overlay overlay -o "lowerdir=$d,upperdir=$scratch/u$d,workdir=$scratch/w$d" "$d"
    done
    cd /usr/lib/x86_64-linux-gnu
    for n in $(ls "$STAGE/lib"); do [ ! -e "$n" ] || rm -f "$(realpath "$n")" "$n"; done
    rm -rf openmpi pmix2 hdf5 /usr/share/openmpi /usr/share/datasets/fashion-mnist /etc/openmpi
    cd "$REPO"
    source tests/gpu/device_env.sh
    ls -la /usr/share/datasets/fashion-mnist
    cflrun_gpu_check "$scratch/check"
  '
  step "simulated device run passed"
fi
