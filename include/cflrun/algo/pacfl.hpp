#pragma once
/// @file
/// PACFL: clustered FL by principal angles between client data subspaces (Vahidian, Morafah et al.,
/// shared/papers/002; Algorithm 1 and Algorithm 2).

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// One-shot clustering, then per-cluster FedAvg. Before round 1 every client sends the p most
/// significant left singular vectors of its data matrix (its signature, Alg. 1 line 8); the server
/// builds the proximity matrix of principal angles (Eq. 2, or Eq. 3 with pacfl_sum_of_angles) and
/// clusters it by hierarchical clustering with threshold beta (or into a fixed number of clusters);
/// every cluster model starts from the same initial model (line 12) and is the sample-weighted
/// average of its clients' local updates each round (lines 21-24). The assignment never changes,
/// so the recorded ARI is the same in every round.
///
/// Newcomers (Alg. 2, Proximity Matrix Extension): a client that was not present at the start is
/// assigned when it first participates: HC is rerun with the same beta on the proximity matrix
/// extended by the newcomers, and the newcomer joins the old cluster that holds most of the old
/// clients in its new cluster; if its new cluster holds none (the paper would start a new cluster
/// model), it joins the old cluster with the smallest mean angle to it. Old clients never move.
class Pacfl : public Algorithm {
 public:
  explicit Pacfl(const AlgorithmSettings& settings);
  std::string name() const override { return "pacfl"; }
  /// Z, the number of clusters found; 1 before adopt_clusters.
  int num_models() const override { return num_clusters_; }
  bool needs_loss_vectors(int /*round*/) const override { return false; }
  bool clusters_clients() const override { return true; }
  int signature_vectors() const override { return settings_.pacfl_vectors; }
  bool same_initial_models() const override { return true; }
  /// @throws ConfigError if signatures is not [M, d, p] with M = num_clients.
  std::vector<int> cluster_signatures(const torch::Tensor& signatures, const std::vector<int>& initial) override;
  void adopt_clusters(const std::vector<int>& clusters) override;
  /// The cluster of each participant; newcomers are placed as described above (rank 0 only).
  std::vector<int> assign(int round, const std::vector<int>& participants, const torch::Tensor& loss_vectors) override;

 private:
  int place_newcomer(int client, const std::vector<int>& newcomers);

  AlgorithmSettings settings_;
  int num_clusters_ = 1;
  std::vector<int> cluster_;  // [M] cluster of each client, -1 until placed
  torch::Tensor proximity_;   // [M, M] degrees, rank 0 only
};

}  // namespace cflrun::algo
