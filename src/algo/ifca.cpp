#include <cflrun/algo/ifca.hpp>

#include <torch/torch.h>

namespace cflrun::algo {

Ifca::Ifca(const AlgorithmSettings& settings) : settings_(settings) {
  check_model_count(settings.num_clients, settings.num_clusters);
}

bool Ifca::needs_loss_vectors(int round) const {
  return !(round == 0 && settings_.random_first_assignment);
}

std::vector<int> Ifca::assign(int round, const std::vector<int>& participants, const torch::Tensor& loss_vectors) {
  if (!needs_loss_vectors(round)) {
    return random_first_assignment(static_cast<int>(participants.size()), settings_.num_clusters, settings_.seed);
  }
  check_loss_vectors(loss_vectors, static_cast<int>(participants.size()), settings_.num_clusters);
  const auto best = loss_vectors.argmin(/*dim=*/1).contiguous();
  const auto* data = best.data_ptr<std::int64_t>();
  return std::vector<int>(data, data + best.numel());
}

}  // namespace cflrun::algo
