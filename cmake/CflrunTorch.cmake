# LibTorch as the target cflrun::torch, from a PyPI `torch` wheel (setup.sh installs a pinned one
# into .venv), the LibTorch archive or a cluster module. Point CMake at it with
#   -DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')
# (or the archive's directory), or -DTorch_DIR=<root>/share/cmake/Torch.
#
# CPU variant (default): links only libtorch_cpu and libc10, so a run does not load the CUDA,
# cuDNN and NCCL libraries at every start. CUDA variant (-DCFLRUN_CUDA=ON, or the target
# cflrun_cuda beside the CPU variant): also libtorch_cuda and libc10_cuda, with the CUDA libraries LibTorch was built with (the wheel's); it runs on the
# CPU where there is no GPU. Neither runs TorchConfig.cmake: for a CUDA build of LibTorch it
# demands the CUDA toolkit and links the toolkit's runtime (13.0 here) beside the wheel's (13.2),
# while cflrun compiles no CUDA code and needs no toolkit.
#
# LibTorch 2.x's headers require C++20: the areas and the precompiled header ask for cxx_std_20.
option(CFLRUN_CUDA "Link LibTorch's CUDA libraries (needs a CUDA build of LibTorch)" OFF)

# The first TorchConfig.cmake among Torch_DIR and CMAKE_PREFIX_PATH's entries (each as given, or
# with Torch/ or share/cmake/Torch/ appended, as find_package(Torch) looks) names LibTorch's root.
set(candidates ${Torch_DIR} $ENV{Torch_DIR})
foreach(prefix IN LISTS CMAKE_PREFIX_PATH)
  list(APPEND candidates ${prefix} ${prefix}/Torch ${prefix}/share/cmake/Torch)
endforeach()
foreach(dir IN LISTS candidates)
  if(NOT CFLRUN_TORCH_CONFIG_DIR AND EXISTS "${dir}/TorchConfig.cmake")
    get_filename_component(CFLRUN_TORCH_CONFIG_DIR "${dir}" ABSOLUTE)
  endif()
endforeach()
if(NOT CFLRUN_TORCH_CONFIG_DIR)
  message(FATAL_ERROR "LibTorch not found: no TorchConfig.cmake in Torch_DIR or CMAKE_PREFIX_PATH. Run "
                      "./setup.sh, or configure with -DCMAKE_PREFIX_PATH=$(python -c 'import torch; "
                      "print(torch.utils.cmake_prefix_path)') or -DTorch_DIR=<libtorch>/share/cmake/Torch.")
endif()
get_filename_component(CFLRUN_TORCH_ROOT "${CFLRUN_TORCH_CONFIG_DIR}/../../.." ABSOLUTE)
file(STRINGS "${CFLRUN_TORCH_CONFIG_DIR}/TorchConfigVersion.cmake" version_line REGEX "set\\(PACKAGE_VERSION ")
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" CFLRUN_TORCH_VERSION "${version_line}")
if(CFLRUN_TORCH_VERSION VERSION_LESS 2.10)
  message(FATAL_ERROR "LibTorch ${CFLRUN_TORCH_VERSION} at ${CFLRUN_TORCH_ROOT} is too old; cflrun "
                      "needs 2.10 or newer (setup.sh installs torch 2.15.0 from PyPI into .venv).")
endif()

add_library(cflrun_torch INTERFACE)
unset(CFLRUN_TORCH_CPU_LIBRARY CACHE)  # found again at each configure: the root may have changed
unset(CFLRUN_C10_LIBRARY CACHE)
find_library(CFLRUN_TORCH_CPU_LIBRARY torch_cpu PATHS ${CFLRUN_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
find_library(CFLRUN_C10_LIBRARY c10 PATHS ${CFLRUN_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
target_include_directories(cflrun_torch SYSTEM INTERFACE
  ${CFLRUN_TORCH_ROOT}/include ${CFLRUN_TORCH_ROOT}/include/torch/csrc/api/include)
target_link_libraries(cflrun_torch INTERFACE ${CFLRUN_TORCH_CPU_LIBRARY} ${CFLRUN_C10_LIBRARY})
# cflrun_torch_cuda: LibTorch's CUDA libraries, where this LibTorch has them (the PyPI wheel's).
# -DCFLRUN_CUDA=ON links them into `cflrun` itself; the target cflrun_cuda (built on request) is
# the CUDA variant from the same objects (tests/cuda_variant.sh): cflrun decides at run time.
foreach(library torch_cuda c10_cuda)
  unset(CFLRUN_${library}_LIBRARY CACHE)
  find_library(CFLRUN_${library}_LIBRARY ${library} PATHS ${CFLRUN_TORCH_ROOT}/lib NO_DEFAULT_PATH)
endforeach()
if(CFLRUN_torch_cuda_LIBRARY AND CFLRUN_c10_cuda_LIBRARY)
  add_library(cflrun_torch_cuda INTERFACE)
  # --no-as-needed: cflrun calls nothing in libtorch_cuda directly; loading it registers LibTorch's
  # CUDA backend. The CUDA libraries it needs (cudart, cuBLAS, cuDNN, NCCL: the wheel's, under
  # site-packages/nvidia) are found through its own run path; -rpath-link lets the linker find
  # them too, before any older copy in the CUDA toolkit's directories.
  file(GLOB cuda_library_dirs LIST_DIRECTORIES true "${CFLRUN_TORCH_ROOT}/../nvidia/*/lib")
  list(JOIN cuda_library_dirs ":" cuda_library_path)
  target_link_libraries(cflrun_torch_cuda INTERFACE
    "-Wl,--push-state,--no-as-needed" ${CFLRUN_torch_cuda_LIBRARY} ${CFLRUN_c10_cuda_LIBRARY} "-Wl,--pop-state")
  target_link_options(cflrun_torch_cuda INTERFACE "LINKER:-rpath-link,${CFLRUN_TORCH_ROOT}/lib:${cuda_library_path}")
elseif(CFLRUN_CUDA)
  message(FATAL_ERROR "CFLRUN_CUDA=ON, but the LibTorch at ${CFLRUN_TORCH_ROOT} has no libtorch_cuda/libc10_cuda: "
                      "it is a CPU build. Point CMAKE_PREFIX_PATH at a CUDA build of LibTorch (PyPI's torch wheel "
                      "for Linux is one), or build with -DCFLRUN_CUDA=OFF.")
endif()
add_library(cflrun::torch ALIAS cflrun_torch)
message(STATUS "cflrun: LibTorch ${CFLRUN_TORCH_VERSION} at ${CFLRUN_TORCH_ROOT} (CUDA variant: ${CFLRUN_CUDA})")
