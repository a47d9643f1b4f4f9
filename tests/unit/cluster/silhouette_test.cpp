#include <cflrun/cluster/silhouette.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

torch::Tensor column(std::vector<double> values) {
  return torch::tensor(values, torch::kFloat64).unsqueeze(1);
}

TEST(Silhouette, MatchesAHandComputedValue) {
  // Points 0, 1 | 4, 6 on a line. Point 0: a = 1, b = (4 + 6) / 2 = 5, s = 4/5.
  // Point 1: a = 1, b = 4, s = 3/4. Point 4: a = 2, b = 3.5, s = 1.5/3.5. Point 6: a = 2, b = 5.5,
  // s = 3.5/5.5. Mean = (0.8 + 0.75 + 3/7 + 7/11) / 4.
  const double expected = (0.8 + 0.75 + 3.0 / 7.0 + 7.0 / 11.0) / 4.0;
  EXPECT_NEAR(silhouette_score(column({0, 1, 4, 6}), {0, 0, 1, 1}), expected, 1e-12);
  // Label values are only names.
  EXPECT_NEAR(silhouette_score(column({0, 1, 4, 6}), {7, 7, -2, -2}), expected, 1e-12);
}

TEST(Silhouette, SingletonClustersScoreZero) {
  // Points 0 | 1, 2: point 0 is alone (s = 0). Point 1: a = 1, b = 1, s = 0. Point 2: a = 1,
  // b = 2, s = 1/2. Mean = 1/6.
  EXPECT_NEAR(silhouette_score(column({0, 1, 2}), {0, 1, 1}), 1.0 / 6.0, 1e-12);
}

TEST(Silhouette, UndefinedForOneClusterOrAllSingletons) {
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {0, 0, 0}), ConfigError);
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {0, 1, 2}), ConfigError);
  EXPECT_THROW(silhouette_score(column({0, 1, 2}), {0, 1}), ShapeError);
}

/// `per_blob` points around each of `blobs` centres 10 apart on a line, in 2-d.
torch::Tensor blobs(int count, int per_blob, double spread) {
  torch::manual_seed(5);
  std::vector<torch::Tensor> parts;
  for (int b = 0; b < count; ++b) {
    auto centre = torch::tensor({10.0 * b, 3.0 * (b % 2)}, torch::kFloat64);
    parts.push_back(centre + spread * torch::randn({per_blob, 2}, torch::kFloat64));
  }
  return torch::cat(parts);
}

TEST(SelectBestK, FindsTheNumberOfWellSeparatedBlobs) {
  EXPECT_EQ(select_best_k(blobs(3, 5, 0.3), 6).k, 3);
  const auto five = select_best_k(blobs(5, 5, 0.3), 7);
  EXPECT_EQ(five.k, 5);
  EXPECT_EQ(five.scores_by_k.size(), 6U);  // K = 2..7
  for (int b = 0; b < 5; ++b) {            // each blob is one cluster
    for (int i = 1; i < 5; ++i) {
      EXPECT_EQ(five.labels[static_cast<std::size_t>(5 * b + i)], five.labels[static_cast<std::size_t>(5 * b)]);
    }
  }
}

TEST(SelectBestK, KeepsTheSmallerKUnlessTheScoreGrowsByTenPercent) {
  // Two far groups, one of which is split into two near sub-groups: K = 3 scores a little higher
  // than K = 2 but less than 10% higher, so K = 2 stays.
  const auto points = column({0, 0.1, 0.2, 100, 100.1, 100.2, 110, 110.1, 110.2});  // 0.961 vs 0.991
  const auto chosen = select_best_k(points, 4);
  ASSERT_GE(chosen.scores_by_k.size(), 2U);
  EXPECT_GT(chosen.scores_by_k[1], chosen.scores_by_k[0]);
  EXPECT_LT(chosen.scores_by_k[1], 1.10 * chosen.scores_by_k[0]);
  EXPECT_EQ(chosen.k, 2);
  // With no growth required the best score wins.
  EXPECT_EQ(select_best_k(points, 4, /*growth=*/1.0).k, 3);
}

TEST(SelectBestK, GivesOneClusterWithoutEvidenceOfMore) {
  EXPECT_EQ(select_best_k(column({1, 2}), 5).k, 1);
  const auto same = select_best_k(column({3, 3, 3, 3}), 3);
  EXPECT_EQ(same.k, 1);
  EXPECT_EQ(same.labels, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(select_best_k(column({0, 1, 5}), 1).k, 1);
}

}  // namespace
}  // namespace cflrun::cluster
