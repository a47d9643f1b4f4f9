#pragma once
// Private to src/run: adds the lifetime of a scope to a running total of seconds.
#include <chrono>

namespace cflrun::run {

/// Adds the seconds between construction and destruction to `total` (compute-time accounting).
class Stopwatch {
 public:
  explicit Stopwatch(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cflrun::run
