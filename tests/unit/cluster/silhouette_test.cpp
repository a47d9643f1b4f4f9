#include <cflrun/cluster/silhouette.hpp>
#include <cflrun/core/error.hpp>

#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::cluster {
namespace {

torch::Tensor column(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64).view({n, 1});
}

TEST(Silhouette, MatchesAHandComputedValueOnALine) {
  // Points 0, 1 | 4, 5. Point 0: a = 1, b = (4 + 5) / 2 = 4.5, s = 3.5 / 4.5 = 7/9.
  // Point 1: a = 1, b = (3 + 4) / 2 = 3.5, s = 2.5 / 3.5 = 5/7. Points 4, 5 mirror 1, 0.
  // Mean = (7/9 + 5/7) / 2 = 47/63.
  EXPECT_NEAR(silhouette_score(column({0, 1, 4, 5}), {0, 0, 1, 1}), 47.0 / 63.0, 1e-12);
}

TEST(Silhouette, IsNegativeForAClusteringThatMixesTheGroups) {
  // Points 0, 4 | 1, 5. Point 0: a = 4, b = (1 + 5) / 2 = 3, s = -1/4. Point 1: a = 4,
  // b = (1 + 3) / 2 = 2, s = -1/2. Points 4 and 5 mirror 1 and 0. Mean = -3/8.
  EXPECT_NEAR(silhouette_score(column({0, 1, 4, 5}), {0, 1, 0, 1}), -0.375, 1e-12);
}

TEST(Silhouette, UsesEuclideanDistances) {
  // Rectangle (0,0), (6,0) | (0,8), (6,8): every point has a = 6, b = (8 + 10) / 2 = 9, s = 1/3
  // (Manhattan distances would give b = 11, s = 5/11).
  const auto points =
      torch::tensor({0.0, 0.0, 6.0, 0.0, 0.0, 8.0, 6.0, 8.0}, torch::kFloat64).view({4, 2});
  EXPECT_NEAR(silhouette_score(points, {0, 0, 1, 1}), 1.0 / 3.0, 1e-12);
}

TEST(Silhouette, MatchesScikitLearnForSingletonsAndIdenticalPoints) {
  // scikit-learn's test_cluster_size_1: X = 0 | 1, 1, 2 | 3, 3 has sample scores
  // [0, 0.5, 0.5, 0, 1, 1]: the singleton scores 0 (Rousseeuw's convention); 1 has a = 0.5, b = 1;
  // 2 has a = 1, b = 1; the two 3s have a = 0, b = 5/3, s = 1. Mean 0.5.
  EXPECT_NEAR(silhouette_score(column({0, 1, 1, 2, 3, 3}), {0, 1, 1, 1, 2, 2}), 0.5, 1e-12);
  // The singleton rule alone: 0 | 10, 11. Point 0 scores 0; 10: a = 1, b = 10, s = 0.9;
  // 11: a = 1, b = 11, s = 10/11. Mean (0.9 + 10/11) / 3.
  EXPECT_NEAR(silhouette_score(column({0, 10, 11}), {0, 1, 1}), (0.9 + 10.0 / 11.0) / 3.0, 1e-12);
}

TEST(Silhouette, ScoresZeroWhereOwnAndNearestClusterCoincide) {
  // 0, 0 | 0: for the first two a = b = 0 (sklearn's nan_to_num gives 0); the third is alone.
  EXPECT_EQ(silhouette_score(column({0, 0, 0}), {0, 0, 1}), 0.0);
}

TEST(Silhouette, DependsOnlyOnWhichLabelsAreEqual) {
  const auto points = column({0, 1, 1, 2, 3, 3});
  EXPECT_DOUBLE_EQ(silhouette_score(points, {7, -2, -2, -2, 40, 40}),
                   silhouette_score(points, {0, 1, 1, 1, 2, 2}));
}

TEST(Silhouette, RejectsUndefinedClusterCountsAndBadShapes) {
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {5, 5, 5}), ConfigError);
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {0, 1, 2}), ConfigError);
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {0, 1}), ShapeError);
  EXPECT_THROW(silhouette_score(torch::zeros({3}, torch::kFloat64), {0, 0, 1}), ShapeError);
  EXPECT_THROW(silhouette_score(column({0, 1, std::nan("")}), {0, 0, 1}), DataError);
}

}  // namespace
}  // namespace cflrun::cluster
