#include <cflrun/algo/fedavg.hpp>

namespace cflrun::algo {

std::vector<int> FedAvg::assign(int /*round*/, const std::vector<int>& participants,
                                const torch::Tensor& /*loss_vectors*/) {
  return std::vector<int>(participants.size(), 0);
}

}  // namespace cflrun::algo
