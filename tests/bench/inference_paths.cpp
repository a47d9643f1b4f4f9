// Benchmark (not a test): the eager eval-mode forward against model::InferenceForward (frozen
// TorchScript) for every architecture, the way scoring runs them (local::kEvalChunk rows per pass,
// one build of the frozen module per model and round counted in). Alternates the two, prints the
// best of the repeats and the ratio eager / frozen.
// Usage: build/tests/bench/inference_paths [SAMPLES=2000] [REPEATS=5] [THREADS=all cores]
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <thread>

#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/local/scoring.hpp>
#include <cflrun/model/inference_forward.hpp>
#include <cflrun/model/network.hpp>

namespace {

template <typename Forward>
double seconds_for(const torch::Tensor& inputs, Forward&& forward) {
  const auto start = std::chrono::steady_clock::now();
  torch::InferenceMode inference;
  for (std::int64_t at = 0; at < inputs.size(0); at += cflrun::local::kEvalChunk) {
    forward(inputs.narrow(0, at, std::min(cflrun::local::kEvalChunk, inputs.size(0) - at)));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t samples = argc > 1 ? std::atoll(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const int threads =
      argc > 3 ? std::atoi(argv[3]) : static_cast<int>(std::thread::hardware_concurrency());
  torch::set_num_threads(threads);
  std::cout << samples << " samples, " << cflrun::local::kEvalChunk << " per pass, " << threads
            << " threads, best of " << repeats << "\n"
            << std::left << std::setw(18) << "model" << std::right << std::setw(10) << "eager s"
            << std::setw(10) << "frozen s" << std::setw(8) << "ratio"
            << "\n";
  for (const auto architecture : cflrun::model::all_architectures()) {
    const auto paper_shape = cflrun::model::paper_shape(architecture);
    torch::manual_seed(1);
    const auto network = cflrun::model::make_network(architecture, paper_shape);
    network->eval();
    std::vector<std::int64_t> shape{samples};
    shape.insert(shape.end(), paper_shape.sample_shape.begin(), paper_shape.sample_shape.end());
    const auto inputs = torch::rand(shape);
    double eager = std::numeric_limits<double>::infinity();
    double frozen = eager;
    for (int r = 0; r < repeats; ++r) {
      eager = std::min(
          eager, seconds_for(inputs, [&](const torch::Tensor& x) { return network->forward(x); }));
      const auto start = std::chrono::steady_clock::now();
      cflrun::model::InferenceForward forward(*network);
      const double build =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      frozen = std::min(
          frozen, build + seconds_for(inputs, [&](const torch::Tensor& x) { return forward(x); }));
    }
    std::cout << std::left << std::setw(18) << cflrun::model::architecture_name(architecture)
              << std::right << std::fixed << std::setprecision(4) << std::setw(10) << eager
              << std::setw(10) << frozen << std::setprecision(2) << std::setw(8) << eager / frozen
              << "\n";
  }
}
