#pragma once
// The failure report shared by the checks of check_results.cpp, variant_checks.cpp and
// soft_checks.cpp.

#include <iostream>
#include <string>

namespace cflrun::checks {

/// Prints "check_results: FAIL: <message>" on stderr and returns 1, the exit code of a failed
/// check.
inline int fail(const std::string& message) {
  std::cerr << "check_results: FAIL: " << message << std::endl;
  return 1;
}

}  // namespace cflrun::checks
