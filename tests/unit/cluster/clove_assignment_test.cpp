#include <cflrun/cluster/clove_assignment.hpp>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::cluster {
namespace {

constexpr int kModels = 3;
constexpr int kClientsPerCluster = 4;

/// Loss vectors of 3 clusters x 4 clients: a client of cluster c has loss about 0.1 on model
/// (c + 1) % 3 and about 2 on the others, plus a per-client perturbation below 0.05.
torch::Tensor shifted_loss_vectors(const std::vector<int>& cluster_of_client) {
  const auto clients = static_cast<std::int64_t>(cluster_of_client.size());
  torch::Tensor losses = torch::full({clients, kModels}, 2.0, torch::kFloat64);
  for (std::int64_t client = 0; client < clients; ++client) {
    const int cluster = cluster_of_client[client];
    losses[client][(cluster + 1) % kModels] = 0.1;
    losses[client] +=
        0.01 * static_cast<double>(client % 5) * torch::tensor({1.0, -0.5, 0.3}, torch::kFloat64);
  }
  return losses;
}

std::vector<int> expected_models(const std::vector<int>& cluster_of_client) {
  std::vector<int> models;
  for (const int cluster : cluster_of_client) {
    models.push_back((cluster + 1) % kModels);
  }
  return models;
}

TEST(CloveAssignment, MapsEachClusterToTheModelWithItsLowestLoss) {
  std::vector<int> cluster_of_client;
  for (int cluster = 0; cluster < kModels; ++cluster) {
    cluster_of_client.insert(cluster_of_client.end(), kClientsPerCluster, cluster);
  }
  std::mt19937_64 engine = core::make_engine(1, core::Purpose::kClustering);
  EXPECT_EQ(assign_by_loss_vector_clustering(shifted_loss_vectors(cluster_of_client),
                                             KMeansOptions{}, engine),
            expected_models(cluster_of_client));
}

TEST(CloveAssignment, InterleavedClientsAreStillMappedByCluster) {
  const std::vector<int> cluster_of_client{2, 0, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2};
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    std::mt19937_64 engine = core::make_engine(seed, core::Purpose::kClustering);
    EXPECT_EQ(assign_by_loss_vector_clustering(shifted_loss_vectors(cluster_of_client),
                                               KMeansOptions{}, engine),
              expected_models(cluster_of_client))
        << "seed " << seed;
  }
}

TEST(CloveAssignment, ClustersPreferringTheSameModelGetDistinctModels) {
  // Both clusters have their lowest loss on model 0; the matching costs are cluster A (clients
  // 0, 1): [0.2, 10.0] and cluster B (clients 2, 3): [0.4, 0.6], so A -> 0, B -> 1 costs 0.8
  // while A -> 1, B -> 0 costs 10.4.
  const torch::Tensor losses =
      torch::tensor({0.1, 5.0, 0.1, 5.0, 0.2, 0.3, 0.2, 0.3}, torch::kFloat64).reshape({4, 2});
  std::mt19937_64 engine = core::make_engine(1, core::Purpose::kClustering);
  EXPECT_EQ(assign_by_loss_vector_clustering(losses, KMeansOptions{}, engine),
            (std::vector<int>{0, 0, 1, 1}));
}

TEST(CloveAssignment, FewerClientsThanModelsMatchesEachClientToItsOwnModel) {
  // Clients away in a round (issue 45): 2 loss vectors for 3 models; each client is its own
  // cluster, matched to distinct models at the least total loss: both prefer model 0, and 0.3 + 0.2
  // beats 0.1 + 7.0.
  std::mt19937_64 engine = core::make_engine(1, core::Purpose::kClustering);
  const torch::Tensor losses =
      torch::tensor({0.1, 5.0, 0.3, 0.2, 8.0, 7.0}, torch::kFloat64).reshape({2, 3});
  EXPECT_EQ(assign_by_loss_vector_clustering(losses, KMeansOptions{}, engine),
            (std::vector<int>{2, 0}));
}

TEST(ClusterModelCosts, SumsTheLossesOfEachClustersClients) {
  // Cluster 0 = clients 0, 2: [1 + 5, 2 + 6] = [6, 8]; cluster 1 = clients 1, 3: [3 + 7, 4 + 8].
  const torch::Tensor losses = torch::arange(1, 9, torch::kFloat64).reshape({4, 2});
  const torch::Tensor costs = cluster_model_costs(losses, {0, 1, 0, 1}, 3);
  EXPECT_TRUE(torch::equal(
      costs, torch::tensor({6.0, 8.0, 10.0, 12.0, 0.0, 0.0}, torch::kFloat64).reshape({3, 2})));
}

TEST(ClusterModelCosts, MismatchedSizesThrowShapeError) {
  EXPECT_THROW(cluster_model_costs(torch::ones({4, 2}, torch::kFloat64), {0, 1, 0}, 2), ShapeError);
}

TEST(ClusterModelCosts, ClusterIdOutOfRangeThrowsConfigError) {
  EXPECT_THROW(cluster_model_costs(torch::ones({2, 2}, torch::kFloat64), {0, 2}, 2), ConfigError);
}

TEST(OrderClustersBySmallestClient, RenamesClustersInOrderOfFirstClient) {
  // Smallest clients: cluster 2 -> 0, cluster 0 -> 2, cluster 1 -> 3; so 2 -> 0, 0 -> 1, 1 -> 2.
  EXPECT_EQ(order_clusters_by_smallest_client({2, 2, 0, 1, 0}, 3),
            (std::vector<int>{0, 0, 1, 2, 1}));
}

TEST(OrderClustersBySmallestClient, EmptyClustersComeLast) {
  EXPECT_EQ(order_clusters_by_smallest_client({1, 1}, 3), (std::vector<int>{0, 0}));
  EXPECT_EQ(order_clusters_by_smallest_client({2, 0}, 3), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace cflrun::cluster
