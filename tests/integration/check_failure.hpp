#pragma once
// The failure report and the per-round reader shared by the checks of check_results.cpp,
// variant_checks.cpp, accuracy_checks.cpp and soft_checks.cpp.

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cflrun/io/result_reader.hpp>

namespace cflrun::checks {

/// Prints "check_results: FAIL: <message>" on stderr and returns 1, the exit code of a failed
/// check.
inline int fail(const std::string& message) {
  std::cerr << "check_results: FAIL: " << message << std::endl;
  return 1;
}

/// The values of a per-round dataset (/rounds/...), at least one: a check over every round of a
/// file without rounds would hold for nothing and prove nothing.
/// @throws std::runtime_error (a failed check) naming the dataset when it is empty.
inline std::vector<double> round_values(const io::ResultReader& reader,
                                        const std::string& dataset) {
  std::vector<double> values = reader.read_f64(dataset);
  if (values.empty()) {
    throw std::runtime_error("the result file's " + dataset +
                             " holds no round; a check over the rounds needs at least one");
  }
  return values;
}

}  // namespace cflrun::checks
