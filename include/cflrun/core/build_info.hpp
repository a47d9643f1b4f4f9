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

/// The LibTorch version this binary was compiled against, e.g. "1.13.1".
std::string torch_version();

/// The real path of the BLAS library the process has mapped for `libblas.so.3`
/// (on Debian chosen by update-alternatives), e.g.
/// "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", or "not loaded".
/// Reads /proc/self/maps; never throws.
std::string blas_library();

/// True when `blas_library()` names the slow reference BLAS (Debian package libblas3), which
/// makes LibTorch about 4x slower here; the fix is `apt-get install libopenblas0-pthread`.
bool blas_is_reference(const std::string& blas_path);

}  // namespace cflrun::core
