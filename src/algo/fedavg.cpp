#include <cflrun/algo/fedavg.hpp>

namespace cflrun::algo {

FedAvg::FedAvg(const AlgorithmSettings& settings) : num_clients_(settings.num_clients) {}

std::vector<int> FedAvg::assign(int /*round*/, const torch::Tensor& /*loss_vectors*/) {
  return std::vector<int>(static_cast<std::size_t>(num_clients_), 0);
}

}  // namespace cflrun::algo
