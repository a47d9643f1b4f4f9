#include <cflrun/algo/local_only.hpp>

namespace cflrun::algo {

LocalOnly::LocalOnly(const AlgorithmSettings& settings) : num_clients_(settings.num_clients) {}

std::vector<int> LocalOnly::assign(int /*round*/, const torch::Tensor& /*loss_vectors*/) {
  std::vector<int> own(static_cast<std::size_t>(num_clients_));
  for (int i = 0; i < num_clients_; ++i) {
    own[static_cast<std::size_t>(i)] = i;
  }
  return own;
}

}  // namespace cflrun::algo
