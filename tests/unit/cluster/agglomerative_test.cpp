#include <cflrun/cluster/agglomerative.hpp>
#include <cflrun/cluster/clove_assignment.hpp>
#include <cflrun/core/error.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::cluster {
namespace {

torch::Tensor column(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64).view({n, 1});
}

TEST(AgglomerativeWard, MergesByTheSmallestIncreaseInWithinClusterSquares) {
  // 0,1 and 5,6 merge first (cost 0.5 each); then {0,1}+{5,6} costs 2*2/4 * 5^2 = 25 against
  // {5,6}+{20} = 2*1/3 * 14.5^2 = 140.2: two clusters {0,1,5,6} | {20}.
  EXPECT_EQ(agglomerative_ward(column({0, 1, 5, 6, 20}), 2), (std::vector<int>{0, 0, 0, 0, 1}));
  EXPECT_EQ(agglomerative_ward(column({0, 1, 5, 6, 20}), 3), (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(agglomerative_ward(column({0, 1, 5, 6, 20}), 5), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(agglomerative_ward(column({0, 1, 5, 6, 20}), 1), (std::vector<int>(5, 0)));
}

TEST(AgglomerativeWard, BreaksTiesByLowestIndicesAndWeighsClusterSizes) {
  // 0, 2, 4, 6, 11: the pairs 0+2, 2+4, 4+6 all cost 2; the lowest (0+2) merges first. Then
  // {0,2}+4 costs 2/3 * 3^2 = 6 but 4+6 still costs 2, so 4+6 merges: {0,2} | {4,6} | {11}.
  EXPECT_EQ(agglomerative_ward(column({0, 2, 4, 6, 11}), 3), (std::vector<int>{0, 0, 1, 1, 2}));
  // 0, 1 | 10, 11, 12 | 30 with k = 3.
  EXPECT_EQ(agglomerative_ward(column({0, 1, 10, 11, 12, 30}), 3),
            (std::vector<int>{0, 0, 1, 1, 1, 2}));
}

TEST(AgglomerativeWard, RejectsBadInput) {
  EXPECT_THROW(agglomerative_ward(column({0, 1}), 3), ConfigError);
  EXPECT_THROW(agglomerative_ward(torch::zeros({3}, torch::kFloat64), 1), ShapeError);
}

TEST(CloveAssignment, AgglomerativeClusteringRecoversWellSeparatedClusters) {
  // 3 clusters x 2 clients; cluster c has low loss on model (c + 1) % 3.
  const auto losses = torch::tensor({5.0, 0.1, 5.0, 5.1, 0.2, 5.0, 5.0, 5.0, 0.1, 5.0, 5.1, 0.2,
                                     0.1, 5.0, 5.0, 0.2, 5.1, 5.0},
                                    torch::kFloat64)
                          .view({6, 3});
  std::mt19937_64 engine(1);
  EXPECT_EQ(assign_by_loss_vector_clustering(losses, KMeansOptions{}, engine, Matching::kMinCost,
                                             Clusterer::kAgglomerativeWard),
            (std::vector<int>{1, 1, 2, 2, 0, 0}));
}

}  // namespace
}  // namespace cflrun::cluster
