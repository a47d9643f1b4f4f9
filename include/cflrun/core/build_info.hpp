#pragma once
/// @file
/// Facts about this build and the libraries it runs on, recorded in every result file.

#include <string>

namespace cflrun::core {

/// The cflrun version (CMake project version), e.g. "0.1.0".
const char* version();

/// The git commit the binary was built from, suffixed "-dirty" when tracked files had
/// uncommitted changes, or "unknown" outside a git checkout.
const char* git_commit();

/// The LibTorch version this binary was compiled against, e.g. "2.15.0".
std::string torch_version();

/// True if this binary is the CUDA variant: LibTorch's CUDA library (libtorch_cuda) is loaded,
/// which registers its CUDA backend (-DCFLRUN_CUDA=ON, or the build's cuda/cflrun). Never throws.
bool cuda_variant();

/// CUDA as this binary uses it: "none (CPU variant; LibTorch built for CUDA 13.2)" when
/// libtorch_cuda is not linked (cuda_variant() is false), else the CUDA and cuDNN versions
/// LibTorch was built with and the GPUs it sees, e.g. "13.2, cuDNN 9.26.0, 0 GPU(s) visible".
/// From at::show_config(); never throws.
std::string cuda_support();

/// The CPU kernels LibTorch runs here: ATen's vector instruction set for this CPU (AVX512, AVX2,
/// DEFAULT; the environment variable ATEN_CPU_CAPABILITY can lower it), the BLAS and the oneDNN
/// version, e.g. "AVX512; BLAS Intel MKL 2024.2; oneDNN v3.13.3". Never throws.
std::string cpu_kernels();

}  // namespace cflrun::core
