# Sets up, on the lent GPU machine, the runtime that tests/gpu/bundle.sh packed into .gpu-bundle
# (that machine has torch 2.11 with its CUDA libraries, but no Open MPI, HDF5, Boost or data):
# unpacks runtime.tar.xz to $CFLRUN_GPU_RUNTIME (/tmp/cflrun-gpu-runtime; again only when it
# changed, relocating build-gpu's CTest files in it: CFLRUN_GPU_BUILD, for `ctest -L gpu` and
# tests/gpu/run.sh), links the default data paths to the bundle's data where they do not exist, and
# exports PATH, LD_LIBRARY_PATH (torch's lib first), the bundle's Open MPI and PMIx directories
# (OPAL_*, PMIX_*), the MCA settings for one node as root, CFLRUN_FMNIST_DIR and CFLRUN_MNIST_DIR.
# Usage, from the repository root, in bash (carry .gpu-bundle):
#   source tests/gpu/device_env.sh && cflrun --version
#   source tests/gpu/device_env.sh && cflrun_gpu_check /tmp/check cuda   # ldd + a 3-rank run
# CFLRUN_GPU_TORCH_LIB names LibTorch's lib directory (default: python3's torch's).
# Sourced, so it changes no shell option; it returns non-zero when a step fails.

# cflrun_gpu_relocate_ctest RUNTIME: build-gpu's CTest files (RUNTIME/ctest) with this machine's
# paths: cflrun and check_results of the runtime, the tests' outputs under RUNTIME/ctest, the
# sources in this repository, the runtime's mpiexec. Fails if a path of the build machine is left.
cflrun_gpu_relocate_ctest() {
  local rt="$1" src
  src="$(cat "$rt/ctest/source_dir")" || return 1
  find "$rt/ctest" -name CTestTestfile.cmake -exec sed -i \
    -e "s#$src/build-gpu/tests/integration/check_results#$rt/bin/check_results#g" \
    -e "s#$src/build-gpu/cflrun#$rt/bin/cflrun#g" -e "s#$src/build-gpu#$rt/ctest#g" -e "s#$src/#$PWD/#g" \
    -e "s#/usr/bin/mpiexec#$rt/bin/mpiexec#g" {} + || return 1
  if [ "$src" != "$PWD" ] && grep -rl "$src/" "$rt/ctest" --include=CTestTestfile.cmake; then
    echo "device_env: $src is still named in the CTest files above" >&2
    return 1
  fi
}

cflrun_gpu_env() {
  local bundle="$PWD/.gpu-bundle" rt="${CFLRUN_GPU_RUNTIME:-/tmp/cflrun-gpu-runtime}"
  local sum torch_lib py
  [ -f "$bundle/runtime.tar.xz" ] || {
    echo "device_env: no $bundle/runtime.tar.xz: run tests/gpu/bundle.sh and carry .gpu-bundle" >&2
    return 1
  }
  sum="$(cksum < "$bundle/runtime.tar.xz") $PWD"
  if [ "$(cat "$rt/.unpacked" 2> /dev/null)" != "$sum" ]; then
    rm -rf "$rt" && mkdir -p "$rt" || return 1
    if command -v xz > /dev/null; then
      xz -dc "$bundle/runtime.tar.xz" | tar -C "$rt" -xf - || return 1
    else  # no xz-utils: Python's tarfile
      python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))' \
        "$bundle/runtime.tar.xz" "$rt" || return 1
    fi
    cflrun_gpu_relocate_ctest "$rt" || return 1
    echo "$sum" > "$rt/.unpacked"
  fi
  export CFLRUN_GPU_RUNTIME="$rt" CFLRUN_GPU_BUILD="$rt/ctest"

  # cflrun's default Fashion-MNIST path. (Open MPI's and PMIx's compiled-in paths are not linked:
  # the OPAL_* and PMIX_* variables below always point them at the bundle.)
  local data=/usr/share/datasets/fashion-mnist
  if [ ! -e "$data" ]; then  # absent, or a dangling link of an earlier session
    { mkdir -p "$(dirname "$data")" && ln -sfn "$bundle/data/fashion-mnist" "$data"; } 2> /dev/null ||
      echo "device_env: cannot link $data: pass --data-dir $bundle/data/fashion-mnist" >&2
  fi
  # The official MNIST: cflrun's default (datasets/mnist, git-ignored) and the tests'
  # (../shared/datasets/mnist-full).
  [ -e datasets/mnist ] || { rm -f datasets/mnist; ln -s "$bundle/data/mnist-full" datasets/mnist; } ||
    echo "device_env: could not link datasets/mnist" >&2
  [ -e ../shared/datasets/mnist-full ] ||
    { mkdir -p ../shared/datasets && ln -sfn "$bundle/data/mnist-full" ../shared/datasets/mnist-full; } 2> /dev/null ||
    echo "device_env: could not link ../shared/datasets/mnist-full" >&2

  torch_lib="${CFLRUN_GPU_TORCH_LIB:-}"
  for py in python3 /opt/torch/.venv/bin/python3; do
    [ -n "$torch_lib" ] && break
    torch_lib="$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2> /dev/null || true)"
  done
  [ -d "$torch_lib" ] || { echo "device_env: no torch found (set CFLRUN_GPU_TORCH_LIB)" >&2; return 1; }
  # Other programs see the bundle's (Debian 12) libraries too: run the device's own tools that
  # could mind (python3, cmake) with LD_LIBRARY_PATH=$CFLRUN_GPU_SAVED_LD_LIBRARY_PATH.
  export CFLRUN_GPU_SAVED_LD_LIBRARY_PATH="${CFLRUN_GPU_SAVED_LD_LIBRARY_PATH-${LD_LIBRARY_PATH:-}}"
  export PATH="$rt/bin:$PATH"
  export LD_LIBRARY_PATH="$torch_lib:$rt/lib${CFLRUN_GPU_SAVED_LD_LIBRARY_PATH:+:$CFLRUN_GPU_SAVED_LD_LIBRARY_PATH}"

  # Open MPI 4.1 on one node, as root, in a VM: shared memory and self only (no single-copy
  # CMA, which a sandbox may refuse), no ssh (plm isolated), no binding, any number of ranks.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  export OMPI_MCA_plm=isolated OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_orte_tmpdir_base=/tmp OMPI_MCA_mca_base_component_show_load_errors=0
  # PMIx: its data store in a hash (no shared-memory store), no munge.
  export PMIX_MCA_gds=hash PMIX_MCA_psec=native
  # Always the bundle's plugins, help and config files: where the paths exist already they may be
  # another Open MPI's (the lent machine has Ubuntu's, whose PMIx plugins do not fit Debian's
  # libpmix: "undefined symbol: PMIx_Info_create"), and a read-only /usr could not take links.
  export OPAL_PKGLIBDIR="$rt/openmpi/lib/openmpi3" OPAL_PKGDATADIR="$rt/share/openmpi"
  export OPAL_SYSCONFDIR="$rt/etc/openmpi" PMIX_MCA_mca_base_component_path="$rt/pmix2/lib/pmix"
  # A lone cflrun (no mpirun) starts no orted; mpirun starts the bundle's, not the machine's.
  export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_orte_launch_agent="$rt/bin/orted"
  export CFLRUN_FMNIST_DIR="$bundle/data/fashion-mnist" CFLRUN_MNIST_DIR="$bundle/data/mnist"
}

# cflrun_gpu_check [OUT_DIR=/tmp/cflrun-gpu-check] [DEVICE=cpu]: prints the libraries that ldd
# cannot find for cflrun, mpirun and every plugin (none expected), cflrun --version, and runs
# the tiny CLoVE experiment on 3 ranks for 2 rounds. Returns non-zero if any of it fails.
cflrun_gpu_check() {
  local out="${1:-/tmp/cflrun-gpu-check}" device="${2:-cpu}" f missing bad=0
  mkdir -p "$out" || return 1
  for f in "$(command -v cflrun)" "$(command -v mpirun)" "$(command -v orted)" \
    "$CFLRUN_GPU_RUNTIME"/openmpi/lib/openmpi3/*.so "$CFLRUN_GPU_RUNTIME"/pmix2/lib/pmix/*.so; do
    missing="$(ldd "$f" 2>&1 | grep "not found" || true)"
    [ -z "$missing" ] || { echo "device_env: $f: $missing" >&2; bad=1; }
  done
  [ "$bad" = 0 ] || { echo "device_env: FAIL: libraries not found" >&2; return 1; }
  cflrun --version || return 1
  mpirun -np 3 --oversubscribe cflrun --config tests/integration/tiny_clove.cfg --rounds 2 \
    --device "$device" --out "$out/tiny.h5" --overwrite || return 1
  echo "device_env: check passed ($device)"
}

cflrun_gpu_env
