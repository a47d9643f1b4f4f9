#include <cflrun/local/batches.hpp>

#include <algorithm>

#include <torch/types.h>

namespace cflrun::local {

double run_batches(std::int64_t n, std::int64_t batch_size, int epochs, bool drop_last,
                   at::Generator& generator, torch::Device device,
                   const std::function<double(const torch::Tensor& rows)>& step) {
  double mean = 0.0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto order = torch::randperm(n, generator, torch::kLong).to(device);
    double sum = 0.0;
    std::int64_t batches = 0;
    for (std::int64_t start = 0; start < n; start += batch_size) {
      const auto length = std::min(batch_size, n - start);
      if (drop_last && length < batch_size) {
        break;
      }
      sum += step(order.narrow(0, start, length));
      ++batches;
    }
    mean = batches > 0 ? sum / static_cast<double>(batches) : 0.0;
  }
  return mean;
}

}  // namespace cflrun::local
