#include <cflrun/algo/local_only.hpp>

namespace cflrun::algo {

LocalOnly::LocalOnly(const AlgorithmSettings& settings) : num_clients_(settings.num_clients) {}

std::vector<int> LocalOnly::assign(int /*round*/, const std::vector<int>& participants,
                                   const torch::Tensor& /*loss_vectors*/) {
  return participants;
}

}  // namespace cflrun::algo
