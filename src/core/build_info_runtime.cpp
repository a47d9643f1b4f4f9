#include <cflrun/core/build_info.hpp>

#include <regex>

#include <dlfcn.h>

#include <ATen/Version.h>
#include <torch/cuda.h>
#include <torch/version.h>

namespace cflrun::core {
namespace {

/// The value of NAME in at::show_config()'s "Build settings: NAME=value, ..." line, or "".
std::string build_setting(const std::string& name) {
  static const std::string config = at::show_config();
  std::smatch match;
  const std::regex pattern("[ ,]" + name + "=([^,\\n]*)");
  return std::regex_search(config, match, pattern) ? match[1].str() : std::string();
}

/// "Intel MKL 2024.2" from at::get_mkl_version()'s "Intel(R) oneAPI Math Kernel Library Version
/// 2024.2-Product Build ...", else LibTorch's BLAS_INFO build setting.
std::string blas_name() {
  std::smatch match;
  const std::string mkl = at::get_mkl_version();
  if (std::regex_search(mkl, match, std::regex("Version ([0-9.]+)"))) {
    return "Intel MKL " + match[1].str();
  }
  const auto info = build_setting("BLAS_INFO");
  return info.empty() ? "unknown" : info;
}

}  // namespace

std::string torch_version() { return TORCH_VERSION; }

bool cuda_variant() {
  // RTLD_NOLOAD: only asks whether the library is already loaded (linked in), never loads it.
  static const bool loaded = dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD) != nullptr;
  return loaded;
}

std::string cuda_support() {
  const auto built_for = build_setting("CUDA_VERSION");
  if (!cuda_variant()) {
    return "none (CPU variant" +
           (built_for.empty() ? std::string() : "; LibTorch built for CUDA " + built_for) + ")";
  }
  const auto cudnn = build_setting("CUDNN_VERSION");
  return (built_for.empty() ? "none (LibTorch built without CUDA)" : built_for) +
         (cudnn.empty() ? "" : ", cuDNN " + cudnn) + ", " +
         std::to_string(torch::cuda::device_count()) + " GPU(s) visible";
}

std::string cpu_kernels() {
  std::smatch match;
  const std::string onednn = at::get_mkldnn_version();
  const auto onednn_version = std::regex_search(onednn, match, std::regex("v[0-9.]+"))
                                  ? match[0].str()
                                  : std::string("none");
  return at::get_cpu_capability() + "; BLAS " + blas_name() + "; oneDNN " + onednn_version;
}

}  // namespace cflrun::core
