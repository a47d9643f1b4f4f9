# LibTorch as the target cflrun::torch, from a PyPI `torch` wheel (setup.sh installs a pinned one
# into .venv), the LibTorch archive or a cluster module. Point CMake at it with
#   -DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')
# (or the archive's directory), or -DTorch_DIR=<root>/share/cmake/Torch.
#
# CPU variant (default): links only libtorch_cpu and libc10. It does not run TorchConfig.cmake,
# which for a CUDA build of LibTorch (PyPI's wheels are) demands the CUDA toolkit and links
# libtorch_cuda, so a CPU run would load the CUDA, cuDNN and NCCL libraries at every start.
# CUDA variant (-DCFLRUN_CUDA=ON): find_package(Torch), which needs the CUDA toolkit (nvcc, or
# CUDAToolkit_ROOT) and links libtorch_cuda; it runs on the CPU where there is no GPU.
#
# LibTorch 2.x's headers require C++20, so every unit is compiled as C++20.
option(CFLRUN_CUDA "Link LibTorch's CUDA libraries (needs a CUDA build of LibTorch and the CUDA toolkit)" OFF)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

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
if(CFLRUN_CUDA)
  # cflrun compiles no CUDA sources: a fixed architecture list spares TorchConfig its GPU probe (a
  # try_run that needs a GPU, and a CUDA20 dialect that CMake 3.25 cannot pass to nvcc).
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "9.0")
  endif()
  if(NOT DEFINED CMAKE_CUDA_STANDARD)
    set(CMAKE_CUDA_STANDARD 17)
  endif()
  # TorchConfig's find_library calls search the system first: a system LibTorch (Debian's
  # libtorch-dev) would shadow this one's libtorch and libc10.
  foreach(library torch c10 c10_cuda)
    string(TOUPPER ${library} upper)
    set(${library}_LIBRARY "${CFLRUN_TORCH_ROOT}/lib/lib${library}.so" CACHE FILEPATH "" FORCE)
    set(${upper}_LIBRARY "${CFLRUN_TORCH_ROOT}/lib/lib${library}.so" CACHE FILEPATH "" FORCE)
  endforeach()
  find_package(Torch REQUIRED PATHS "${CFLRUN_TORCH_CONFIG_DIR}" NO_DEFAULT_PATH)
  if(NOT TARGET torch_cuda)
    message(FATAL_ERROR "CFLRUN_CUDA=ON, but the LibTorch found at ${TORCH_INSTALL_PREFIX} has no "
                        "CUDA libraries (libtorch_cuda). Point CMAKE_PREFIX_PATH at a CUDA build of "
                        "LibTorch (PyPI's torch wheel for Linux is one), or build with -DCFLRUN_CUDA=OFF.")
  endif()
  target_link_libraries(cflrun_torch INTERFACE ${TORCH_LIBRARIES})
  target_include_directories(cflrun_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_compile_definitions(cflrun_torch INTERFACE CFLRUN_CUDA=1)
else()
  unset(CFLRUN_TORCH_CPU_LIBRARY CACHE)  # found again at each configure: the root may have changed
  unset(CFLRUN_C10_LIBRARY CACHE)
  find_library(CFLRUN_TORCH_CPU_LIBRARY torch_cpu PATHS ${CFLRUN_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
  find_library(CFLRUN_C10_LIBRARY c10 PATHS ${CFLRUN_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
  target_include_directories(cflrun_torch SYSTEM INTERFACE
    ${CFLRUN_TORCH_ROOT}/include ${CFLRUN_TORCH_ROOT}/include/torch/csrc/api/include)
  target_link_libraries(cflrun_torch INTERFACE ${CFLRUN_TORCH_CPU_LIBRARY} ${CFLRUN_C10_LIBRARY})
endif()
add_library(cflrun::torch ALIAS cflrun_torch)
message(STATUS "cflrun: LibTorch ${CFLRUN_TORCH_VERSION} at ${CFLRUN_TORCH_ROOT} (CUDA variant: ${CFLRUN_CUDA})")
