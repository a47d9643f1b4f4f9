#include <cflrun/core/build_info.hpp>

#include <filesystem>
#include <fstream>

#include <torch/version.h>

namespace cflrun::core {

std::string torch_version() { return TORCH_VERSION; }

std::string blas_library() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) {
      continue;
    }
    const std::string path = line.substr(slash);
    const std::string name = std::filesystem::path(path).filename().string();
    if (name.rfind("libblas.so", 0) == 0 || name.rfind("libopenblas", 0) == 0 ||
        name.rfind("libmkl_rt", 0) == 0 || name.rfind("libblis", 0) == 0) {
      std::error_code ec;
      const auto real = std::filesystem::canonical(path, ec);
      return ec ? path : real.string();
    }
  }
  return "not loaded";
}

bool blas_is_reference(const std::string& blas_path) {
  return blas_path.find("/blas/libblas.so") != std::string::npos;
}

}  // namespace cflrun::core
