#pragma once
/// @file
/// Local-only: every client trains its own model on its own data; nothing is shared.

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// M models, client i always trains model i (the "local model" baseline of IFCA Sec. 6 and of
/// the CLoVE paper's tables). Averaging over a single client returns its own parameters, so the
/// shared machinery needs no special case. No clustering: ARI is undefined.
class LocalOnly : public Algorithm {
 public:
  explicit LocalOnly(const AlgorithmSettings& settings);
  std::string name() const override { return "local"; }
  int num_models() const override { return num_clients_; }
  bool needs_loss_vectors(int /*round*/) const override { return false; }
  bool clusters_clients() const override { return false; }
  std::vector<int> assign(int round, const std::vector<int>& participants,
                          const torch::Tensor& loss_vectors) override;

 private:
  int num_clients_;
};

}  // namespace cflrun::algo
