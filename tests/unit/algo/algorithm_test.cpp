#include <cflrun/algo/algorithm.hpp>
#include <cflrun/core/error.hpp>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace cflrun::algo {
namespace {

std::vector<int> everyone(int m) {
  std::vector<int> ids(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    ids[static_cast<std::size_t>(i)] = i;
  }
  return ids;
}

AlgorithmSettings settings_for(const std::string& name, int clients, int clusters) {
  AlgorithmSettings s;
  s.name = name;
  s.num_clients = clients;
  s.num_clusters = clusters;
  s.seed = 7;
  return s;
}

TEST(RandomFirstAssignment, UsesEveryModelAndNumbersGroupsBySmallestClient) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto a = random_first_assignment(12, 5, seed);
    ASSERT_EQ(a.size(), 12U);
    EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 5U);
    EXPECT_EQ(a[0], 0);
    int next_new = 1;  // the first appearance of each model id is in increasing order
    std::set<int> seen{0};
    for (int m : a) {
      if (seen.insert(m).second) {
        EXPECT_EQ(m, next_new++);
      }
    }
  }
}

TEST(RandomFirstAssignment, IsDeterministicPerSeed) {
  EXPECT_EQ(random_first_assignment(25, 5, 3), random_first_assignment(25, 5, 3));
  EXPECT_NE(random_first_assignment(25, 5, 3), random_first_assignment(25, 5, 4));
}

TEST(RandomFirstAssignment, RejectsMoreModelsThanClients) {
  EXPECT_THROW(random_first_assignment(3, 4, 1), ConfigError);
}

TEST(Ifca, PicksTheModelWithTheSmallestLoss) {
  auto ifca = make_algorithm(settings_for("ifca", 3, 2));
  const auto losses = torch::tensor({0.5, 0.2, 0.1, 0.9, 0.3, 0.3}, torch::kFloat64).view({3, 2});
  EXPECT_EQ(ifca->assign(1, everyone(3), losses), (std::vector<int>{1, 0, 0}));
}

TEST(Clove, RecoversClustersThatIfcaWouldMerge) {
  // The CLoVE paper's Fig. 1: every client has its lowest loss on model 0, so IFCA puts all clients
  // on model 0, but the loss vectors form two clusters that matching sends to different models.
  std::vector<double> rows;
  for (int i = 0; i < 6; ++i) {
    if (i < 3) {
      rows.insert(rows.end(), {1.0 + 0.01 * i, 5.1 + 0.01 * i});
    } else {
      rows.insert(rows.end(), {2.1 + 0.01 * i, 3.5 + 0.01 * i});
    }
  }
  const auto losses = torch::tensor(rows, torch::kFloat64).view({6, 2});
  auto clove = make_algorithm(settings_for("clove", 6, 2));
  auto ifca = make_algorithm(settings_for("ifca", 6, 2));
  EXPECT_EQ(ifca->assign(1, everyone(6), losses), (std::vector<int>(6, 0)));
  // Cluster {0,1,2} costs 3.03 on model 0 and 15.33 on model 1; {3,4,5} costs 6.42 and 10.62:
  // the min-cost matching gives {0,1,2} -> 0 and {3,4,5} -> 1 (3.03 + 10.62 < 15.33 + 6.42).
  EXPECT_EQ(clove->assign(1, everyone(6), losses), (std::vector<int>{0, 0, 0, 1, 1, 1}));
}

TEST(Clove, RandomFirstRoundNeedsNoLossVectors) {
  auto s = settings_for("clove", 10, 5);
  s.random_first_assignment = true;
  auto clove = make_algorithm(s);
  EXPECT_FALSE(clove->needs_loss_vectors(0));
  EXPECT_TRUE(clove->needs_loss_vectors(1));
  EXPECT_EQ(clove->assign(0, everyone(10), torch::Tensor()), random_first_assignment(10, 5, s.seed));
}

TEST(Clove, ClustersOnlyTheParticipants) {
  // Participants 1, 4, 6 of 8 clients; rows are their loss vectors.
  const auto losses = torch::tensor({0.1, 2.0, 2.1, 0.2, 0.1, 1.9}, torch::kFloat64).view({3, 2});
  auto clove = make_algorithm(settings_for("clove", 8, 2));
  EXPECT_EQ(clove->assign(2, {1, 4, 6}, losses), (std::vector<int>{0, 1, 0}));
  EXPECT_THROW(clove->assign(2, {1, 4}, losses), ShapeError);
}

TEST(Clove, SquareRootLossVectorsChangeTheClusters) {
  // Model 0 losses 0.01, 1, 4, 9 and a constant 5 on model 1. k-means on the raw losses splits
  // {0.01, 1, 4} | {9} (SSE 8.64 < 12.99 for {0.01, 1} | {4, 9}); on their square roots
  // 0.1, 1, 2, 3 it splits {0.1, 1} | {2, 3} (SSE 0.905 < 1.806). Matching then sends the cluster
  // of client 0 to model 0 in both cases.
  const auto losses = torch::tensor({0.01, 5.0, 1.0, 5.0, 4.0, 5.0, 9.0, 5.0}, torch::kFloat64).view({4, 2});
  auto raw = make_algorithm(settings_for("clove", 4, 2));
  auto s = settings_for("clove", 4, 2);
  s.sqrt_loss_vectors = true;
  auto rooted = make_algorithm(s);
  EXPECT_EQ(raw->assign(1, everyone(4), losses), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(rooted->assign(1, everyone(4), losses), (std::vector<int>{0, 0, 1, 1}));
}

TEST(Clove, NoMatchingGivesTheClusterOfClientZeroModelZero) {
  // Clients 0-2 fit model 1, clients 3-5 model 0: matching sends {0,1,2} to model 1; the ablation
  // without matching gives the cluster holding the smallest client id model 0 regardless.
  const auto losses =
      torch::tensor({5.0, 1.0, 5.1, 1.1, 5.2, 1.2, 1.0, 5.0, 1.1, 5.1, 1.2, 5.2}, torch::kFloat64).view({6, 2});
  auto matched = make_algorithm(settings_for("clove", 6, 2));
  auto s = settings_for("clove", 6, 2);
  s.min_cost_matching = false;
  auto unmatched = make_algorithm(s);
  EXPECT_EQ(matched->assign(1, everyone(6), losses), (std::vector<int>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(unmatched->assign(1, everyone(6), losses), (std::vector<int>{0, 0, 0, 1, 1, 1}));
}

TEST(Clove, RejectsLossVectorsOfTheWrongShapeOrNonFinite) {
  auto clove = make_algorithm(settings_for("clove", 4, 2));
  EXPECT_THROW(clove->assign(1, everyone(4), torch::zeros({4, 3}, torch::kFloat64)), ShapeError);
  auto bad = torch::ones({4, 2}, torch::kFloat64);
  bad[1][1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(clove->assign(1, everyone(4), bad), Error);
}

TEST(Baselines, FedAvgSharesOneModelAndLocalOnlyKeepsOwnModels) {
  auto fedavg = make_algorithm(settings_for("fedavg", 4, 2));
  auto local = make_algorithm(settings_for("local", 4, 2));
  EXPECT_EQ(fedavg->num_models(), 1);
  EXPECT_EQ(local->num_models(), 4);
  EXPECT_EQ(fedavg->assign(0, everyone(4), {}), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(local->assign(3, everyone(4), {}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(local->assign(3, {1, 3}, {}), (std::vector<int>{1, 3}));
  EXPECT_EQ(fedavg->assign(3, {1, 3}, {}), (std::vector<int>{0, 0}));
  EXPECT_FALSE(fedavg->clusters_clients());
  EXPECT_FALSE(local->needs_loss_vectors(0));
}

TEST(Factory, RejectsUnknownNamesAndTooManyModels) {
  EXPECT_THROW(make_algorithm(settings_for("cfl", 4, 2)), ConfigError);
  EXPECT_THROW(make_algorithm(settings_for("clove", 4, 5)), ConfigError);
  EXPECT_THROW(make_algorithm(settings_for("ifca", 4, 0)), ConfigError);
}

}  // namespace
}  // namespace cflrun::algo

namespace cflrun::algo {
namespace {

TEST(Pacfl, ClustersInitialClientsOnceAndPlacesNewcomersWithoutMovingOldClients) {
  AlgorithmSettings settings;
  settings.name = "pacfl";
  settings.num_clients = 6;
  settings.pacfl_beta = 10.0;
  auto pacfl = make_algorithm(settings);
  // Signatures in 4 dimensions: clients 0, 1, 4 span axis 0, clients 2, 3, 5 axis 3 (p = 1).
  auto signatures = torch::zeros({6, 4, 1}, torch::kFloat64);
  for (int c : {0, 1, 4}) signatures[c][0][0] = 1.0;
  for (int c : {2, 3, 5}) signatures[c][3][0] = 1.0;
  const auto clusters = pacfl->cluster_signatures(signatures, {0, 1, 2, 3});
  EXPECT_EQ(clusters, (std::vector<int>{0, 0, 1, 1, -1, -1}));
  pacfl->adopt_clusters(clusters);
  EXPECT_EQ(pacfl->num_models(), 2);
  EXPECT_TRUE(pacfl->same_initial_models());
  EXPECT_FALSE(pacfl->needs_loss_vectors(0));
  EXPECT_EQ(pacfl->assign(0, {0, 1, 2, 3}, torch::Tensor()), (std::vector<int>{0, 0, 1, 1}));
  // Newcomers 4 and 5 join the clusters of the old clients in their subspaces (PACFL Alg. 2).
  EXPECT_EQ(pacfl->assign(3, {0, 1, 2, 3, 4, 5}, torch::Tensor()), (std::vector<int>{0, 0, 1, 1, 0, 1}));
}

}  // namespace
}  // namespace cflrun::algo
