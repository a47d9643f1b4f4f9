#pragma once
/// @file
/// FedAvg (McMahan et al. 2017): one global model trained by every client.

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// One model; every client trains it each round and the server takes the sample-weighted average
/// (CLoVE Alg. 1 with K = 1, as the paper notes in Sec. 3). No clustering: ARI is undefined.
class FedAvg : public Algorithm {
 public:
  explicit FedAvg(const AlgorithmSettings& /*settings*/) {}
  std::string name() const override { return "fedavg"; }
  int num_models() const override { return 1; }
  bool needs_loss_vectors(int /*round*/) const override { return false; }
  bool clusters_clients() const override { return false; }
  std::vector<int> assign(int round, const std::vector<int>& participants,
                          const torch::Tensor& loss_vectors) override;
};

}  // namespace cflrun::algo
