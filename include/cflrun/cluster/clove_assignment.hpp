#pragma once
/// @file
/// The clustering step of CLoVE (Alg. 1 lines 9-10): cluster the clients' loss vectors with
/// k-means, then match clusters to models by minimum total loss. Follows the official code
/// (shared/papers/clove-official-setup.md, Sec. 11): clusters ordered by their smallest client
/// id, cost[cluster, model] = sum of the cluster's clients' losses on the model, Hungarian
/// matching.

#include <random>
#include <vector>

#include <torch/types.h>

#include <cflrun/cluster/agglomerative.hpp>
#include <cflrun/cluster/kmeans.hpp>

namespace cflrun::cluster {

/// The matching costs: cost[c, j] = sum over clients i in cluster c of loss_vectors[i, j].
/// An empty cluster has a zero row.
/// @param loss_vectors       [M, K] float64, row i = client i's mean training loss on each model.
/// @param cluster_of_client  [M] cluster of each client, in [0, num_clusters).
/// @param num_clusters       number of clusters C >= 1.
/// @return                   [C, K] float64.
/// @throws ShapeError   if loss_vectors is not 2-D float64 or its row count is not the length
///                      of cluster_of_client.
/// @throws ConfigError  if num_clusters < 1 or a cluster id is outside [0, num_clusters).
torch::Tensor cluster_model_costs(const torch::Tensor& loss_vectors,
                                  const std::vector<int>& cluster_of_client, int num_clusters);

/// Renames clusters so that they are numbered in the order of their smallest client id (the
/// official code sorts its clusters, as lists of client ids, this way before matching; the
/// "no matching" ablation then gives sorted cluster i model i). Empty clusters come last, in
/// their old order.
/// @param cluster_of_client  [M] cluster of each client (client i = entry i), in [0, num_clusters).
/// @param num_clusters       number of clusters C >= 1.
/// @return                   [M] the renamed cluster of each client, in [0, C).
/// @throws ConfigError if num_clusters < 1 or a cluster id is outside [0, num_clusters).
std::vector<int> order_clusters_by_smallest_client(const std::vector<int>& cluster_of_client,
                                                   int num_clusters);

/// How CLoVE clusters the loss vectors.
enum class Clusterer {
  kKMeans,             ///< k-means with k-means++ seeding (Alg. 1 line 9; the default).
  kAgglomerativeWard,  ///< Ward agglomerative clustering (paper Table 12, row 1902).
};

/// How CLoVE maps its loss-vector clusters (ordered by smallest client id) to models.
enum class Matching {
  kMinCost,  ///< min-cost bipartite matching (Hungarian), CLoVE Alg. 1 line 10.
  kNone,     ///< the "no matching" ablation (paper Table 12, row 1901): cluster i -> model i.
};

/// Alg. 1 line 10 for a given clustering: clusters ordered by their smallest client id, then
/// matched to models by min-cost bipartite matching on cluster_model_costs (kMinCost), or sorted
/// cluster i -> model i (kNone). With fewer clusters than models (unknown K) some models get no
/// client.
/// @param loss_vectors       [M, K] float64 (possibly transformed) loss vectors.
/// @param cluster_of_client  [M] cluster of each client, in [0, num_clusters).
/// @param num_clusters       C, 1 <= C <= K.
/// @return                   [M] model of each client, distinct models for distinct clusters.
/// @throws as cluster_model_costs; ConfigError if C > K.
std::vector<int> match_clusters_to_models(const torch::Tensor& loss_vectors,
                                          const std::vector<int>& cluster_of_client,
                                          int num_clusters, Matching matching);

/// CLoVE's assignment of clients to models: k-means with k = K on the loss vectors (Alg. 1
/// line 9), clusters ordered by their smallest client id, then the min-cost matching of
/// clusters to models with cost = cluster_model_costs (Alg. 1 line 10).
/// @param loss_vectors  [M, K] float64, finite; row i = client i's loss on each of the K models.
/// @param options       k-means restarts, iteration limit and tolerance.
/// @param engine        random stream (core::Purpose::kClustering); advanced by k-means.
/// @return              [M] model of each client, in [0, K); clients of one cluster share a model,
///                      distinct clusters get distinct models. With fewer clients than models
///                      (M < K: clients away in a round, issue 45) every client is its own
///                      cluster, matched to distinct models.
/// @throws ShapeError, DataError  if loss_vectors is not [M, K] float64 or is non-finite.
/// @throws ConfigError            if the options are invalid (see kmeans).
/// @param matching   kMinCost (default) or kNone (ablation).
/// @param clusterer  kKMeans (default; uses `options` and `engine`) or kAgglomerativeWard.
std::vector<int> assign_by_loss_vector_clustering(const torch::Tensor& loss_vectors,
                                                  const KMeansOptions& options,
                                                  std::mt19937_64& engine,
                                                  Matching matching = Matching::kMinCost,
                                                  Clusterer clusterer = Clusterer::kKMeans);

}  // namespace cflrun::cluster
