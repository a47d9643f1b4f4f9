#pragma once
/// @file
/// CLoVE: Clustering of Loss Vector Embeddings (CLoVE paper, Alg. 1, Option I model averaging).

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// Each round the server clusters the clients' loss vectors with k-means (k-means++ seeding,
/// `kmeans_restarts` starts, K clusters), orders the clusters by their smallest client id and
/// matches them to the K models by min-cost bipartite matching (Hungarian algorithm), where the
/// cost of cluster c on model j is the sum of c's clients' losses on j (Alg. 1 lines 8-10;
/// clove-official-setup.md Sec. 11). Every client then trains its cluster's model.
/// Variants (settings): square-root loss vectors; no matching (cluster i -> model i).
class Clove : public Algorithm {
 public:
  /// @throws ConfigError if settings.num_clusters is not in [1, settings.num_clients].
  explicit Clove(const AlgorithmSettings& settings);
  std::string name() const override { return "clove"; }
  int num_models() const override { return settings_.num_clusters; }
  bool needs_loss_vectors(int round) const override;
  bool clusters_clients() const override { return true; }
  std::vector<int> assign(int round, const std::vector<int>& participants,
                          const torch::Tensor& loss_vectors) override;

 private:
  AlgorithmSettings settings_;
};

}  // namespace cflrun::algo
