#include <cflrun/cluster/clove_assignment.hpp>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <string>

#include <cflrun/cluster/hungarian.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

void require_cluster_ids(const std::vector<int>& cluster_of_client, int num_clusters,
                         const std::string& who) {
  if (num_clusters < 1) {
    throw ConfigError(who + ": the number of clusters must be at least 1, but got " +
                      std::to_string(num_clusters));
  }
  for (std::size_t client = 0; client < cluster_of_client.size(); ++client) {
    const int cluster = cluster_of_client[client];
    if (cluster < 0 || cluster >= num_clusters) {
      throw ConfigError(who + ": client " + std::to_string(client) + " has cluster " +
                        std::to_string(cluster) + ", outside [0, " + std::to_string(num_clusters) +
                        ")");
    }
  }
}

}  // namespace

torch::Tensor cluster_model_costs(const torch::Tensor& loss_vectors,
                                  const std::vector<int>& cluster_of_client, int num_clusters) {
  if (!loss_vectors.defined() || loss_vectors.dim() != 2 ||
      loss_vectors.scalar_type() != torch::kFloat64 ||
      loss_vectors.size(0) != static_cast<std::int64_t>(cluster_of_client.size())) {
    std::ostringstream text;
    text << "cluster_model_costs: expected [M, K] float64 loss vectors with M = "
         << cluster_of_client.size() << " (one cluster id per client), but got "
         << (loss_vectors.defined() ? loss_vectors.sizes() : torch::IntArrayRef{});
    throw ShapeError(text.str());
  }
  require_cluster_ids(cluster_of_client, num_clusters, "cluster_model_costs");
  const torch::Tensor index = torch::tensor(
      std::vector<std::int64_t>(cluster_of_client.begin(), cluster_of_client.end()), torch::kInt64);
  return torch::zeros({num_clusters, loss_vectors.size(1)}, loss_vectors.options())
      .index_add_(0, index, loss_vectors);
}

std::vector<int> order_clusters_by_smallest_client(const std::vector<int>& cluster_of_client,
                                                   int num_clusters) {
  require_cluster_ids(cluster_of_client, num_clusters, "order_clusters_by_smallest_client");
  const int kNoClient = static_cast<int>(cluster_of_client.size());  // sorts empty clusters last
  std::vector<int> smallest_client(num_clusters, kNoClient);
  for (int client = kNoClient - 1; client >= 0; --client) {
    smallest_client[cluster_of_client[client]] = client;
  }
  std::vector<int> old_in_order(num_clusters);
  std::iota(old_in_order.begin(), old_in_order.end(), 0);
  std::stable_sort(old_in_order.begin(), old_in_order.end(),
                   [&](int a, int b) { return smallest_client[a] < smallest_client[b]; });
  std::vector<int> new_name(num_clusters);
  for (int position = 0; position < num_clusters; ++position) {
    new_name[old_in_order[position]] = position;
  }
  std::vector<int> renamed(cluster_of_client.size());
  std::transform(cluster_of_client.begin(), cluster_of_client.end(), renamed.begin(),
                 [&](int cluster) { return new_name[cluster]; });
  return renamed;
}

std::vector<int> assign_by_loss_vector_clustering(const torch::Tensor& loss_vectors,
                                                  const KMeansOptions& options,
                                                  std::mt19937_64& engine, Matching matching,
                                                  Clusterer clusterer) {
  require_point_matrix(loss_vectors, "CLoVE clustering");
  const int num_models = static_cast<int>(loss_vectors.size(1));
  if (loss_vectors.size(0) < num_models) {  // clients away this round: each its own cluster
    const int clients = static_cast<int>(loss_vectors.size(0));
    std::vector<int> own(static_cast<std::size_t>(clients));
    std::iota(own.begin(), own.end(), 0);
    return match_clusters_to_models(loss_vectors, own, clients, matching);
  }
  const std::vector<int> labels = clusterer == Clusterer::kKMeans
                                      ? kmeans(loss_vectors, num_models, options, engine).labels
                                      : agglomerative_ward(loss_vectors, num_models);
  return match_clusters_to_models(loss_vectors, labels, num_models, matching);
}

std::vector<int> match_clusters_to_models(const torch::Tensor& loss_vectors,
                                          const std::vector<int>& labels, int num_clusters,
                                          Matching matching) {
  if (num_clusters > loss_vectors.size(1)) {
    throw ConfigError("CLoVE matching: " + std::to_string(num_clusters) + " clusters for only " +
                      std::to_string(loss_vectors.size(1)) + " models");
  }
  const std::vector<int> cluster_of_client =
      order_clusters_by_smallest_client(labels, num_clusters);
  if (matching == Matching::kNone) {
    return cluster_of_client;  // ordered cluster i trains model i
  }
  const std::vector<int> model_of_cluster =
      min_cost_matching(cluster_model_costs(loss_vectors, cluster_of_client, num_clusters));
  std::vector<int> model_of_client(cluster_of_client.size());
  std::transform(cluster_of_client.begin(), cluster_of_client.end(), model_of_client.begin(),
                 [&](int cluster) { return model_of_cluster[cluster]; });
  return model_of_client;
}

}  // namespace cflrun::cluster
