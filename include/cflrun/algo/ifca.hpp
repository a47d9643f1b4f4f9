#pragma once
/// @file
/// IFCA: Iterative Federated Clustering Algorithm (Ghosh et al., Alg. 1, model averaging).

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// Each client picks the model with the smallest loss on its training data
/// (IFCA Alg. 1: j_i = argmin_j F_i(theta_j); ties go to the lowest model index), and the
/// server averages each model over the clients that picked it.
class Ifca : public Algorithm {
 public:
  /// @throws ConfigError if settings.num_clusters is not in [1, settings.num_clients].
  explicit Ifca(const AlgorithmSettings& settings);
  std::string name() const override { return "ifca"; }
  int num_models() const override { return settings_.num_clusters; }
  bool needs_loss_vectors(int round) const override;
  bool clusters_clients() const override { return true; }
  std::vector<int> assign(int round, const std::vector<int>& participants,
                          const torch::Tensor& loss_vectors) override;

 private:
  AlgorithmSettings settings_;
};

}  // namespace cflrun::algo
