#pragma once
/// @file
/// IFCA: Iterative Federated Clustering Algorithm (Ghosh et al., Alg. 1, model averaging).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// Each participant sends its loss vector and picks the model with the smallest loss on its
/// training data (IFCA Alg. 1: j_i = argmin_j F_i(theta_j); ties go to the lowest model index),
/// and the server averages each model over the clients that picked it. With --first-assignment
/// random round 1 is assigned at random. Weight sharing (--cluster-layers) is run-level.
class Ifca : public Algorithm {
 public:
  static constexpr const char* kName = "ifca";
  static constexpr const char* kSummary =
      "IFCA: each client takes the model with its smallest loss (Ghosh et al., Alg. 1)";
  using Options = NoOptions;
  /// @throws ConfigError if K is not in [1, M].
  Ifca(const NoOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_models; }
  Traits traits() const override {
    return {.clusters_clients = true, .records_loss_vectors = true};
  }
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  RoundPlan plan(const RoundInput& input) override;

 private:
  AlgorithmContext context_;
};

}  // namespace cflrun::algo
