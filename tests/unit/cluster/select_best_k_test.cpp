#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/cluster/select_best_k.hpp>
#include <cflrun/core/error.hpp>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::cluster {
namespace {

torch::Tensor column(std::vector<double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64).view({n, 1});
}

/// `per_blob` 2-D points from N(centre, 0.5^2 I) around each centre, blob after blob.
struct Blobs {
  torch::Tensor points;
  std::vector<int> truth;
};

Blobs gaussian_blobs(const std::vector<std::pair<double, double>>& centres, int per_blob) {
  std::mt19937_64 engine(7);
  std::normal_distribution<double> noise(0.0, 0.5);
  std::vector<double> coordinates;
  Blobs blobs;
  for (std::size_t c = 0; c < centres.size(); ++c) {
    for (int i = 0; i < per_blob; ++i) {
      coordinates.push_back(centres[c].first + noise(engine));
      coordinates.push_back(centres[c].second + noise(engine));
      blobs.truth.push_back(static_cast<int>(c));
    }
  }
  const auto n = static_cast<std::int64_t>(blobs.truth.size());
  blobs.points = torch::tensor(coordinates, torch::kFloat64).view({n, 2});
  return blobs;
}

TEST(SelectBestK, FindsThreeWellSeparatedBlobs) {
  const Blobs blobs = gaussian_blobs({{0, 0}, {10, 0}, {5, 9}}, 8);
  const KSelection chosen = select_best_k(blobs.points, 6);
  EXPECT_EQ(chosen.k, 3);
  EXPECT_EQ(adjusted_rand_index(blobs.truth, chosen.labels), 1.0);
  ASSERT_EQ(chosen.scores_by_k.size(), 5U);  // K = 2 ... 6
  EXPECT_EQ(chosen.score, chosen.scores_by_k[1]);
  EXPECT_GT(chosen.score, 0.8);
}

TEST(SelectBestK, FindsFiveWellSeparatedBlobs) {
  const Blobs blobs = gaussian_blobs({{0, 0}, {12, 0}, {0, 12}, {12, 12}, {6, 6}}, 6);
  const KSelection chosen = select_best_k(blobs.points, 8);
  EXPECT_EQ(chosen.k, 5);
  EXPECT_EQ(adjusted_rand_index(blobs.truth, chosen.labels), 1.0);
  EXPECT_EQ(chosen.scores_by_k.size(), 7U);  // K = 2 ... 8
}

TEST(SelectBestK, KeepsTheSmallerKWhenTheGainIsBelowTheGrowthFactor) {
  // 0, 0.5, 1 | 10, 10.5 | 13.5, 14: Ward gives {A} {B} for K = 2 (silhouette 0.84783) and
  // splits B for K = 3 (0.88859), only 4.8% better; K = 4, 5, 6 score 0.561, 0.313, 0.071
  // (values from the definition, computed independently in Python).
  const auto points = column({0, 0.5, 1, 10, 10.5, 13.5, 14});
  const KSelection chosen = select_best_k(points, 6);
  EXPECT_EQ(chosen.k, 2);
  EXPECT_EQ(chosen.labels, (std::vector<int>{0, 0, 0, 1, 1, 1, 1}));
  const std::vector<double> expected{0.8478266842206583, 0.8885867373672252, 0.5608058608058608,
                                     0.3129251700680272, 0.07142857142857142};
  ASSERT_EQ(chosen.scores_by_k.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(chosen.scores_by_k[i], expected[i], 1e-12) << "K = " << i + 2;
  }
  EXPECT_EQ(chosen.score, chosen.scores_by_k[0]);
  // Without the 10% margin the higher score wins.
  const KSelection greedy = select_best_k(points, 6, /*growth_factor=*/1.0);
  EXPECT_EQ(greedy.k, 3);
  EXPECT_EQ(greedy.labels, (std::vector<int>{0, 0, 0, 1, 1, 2, 2}));
}

TEST(SelectBestK, StopsAtOneClusterFewerThanPoints) {
  const KSelection chosen = select_best_k(column({0, 1, 10, 11}), 10);
  EXPECT_EQ(chosen.scores_by_k.size(), 2U);  // K = 2, 3
  EXPECT_EQ(chosen.k, 2);
  EXPECT_EQ(chosen.labels, (std::vector<int>{0, 0, 1, 1}));
}

TEST(SelectBestK, ChoosesOneClusterForFewerThanThreePointsOrIdenticalPoints) {
  for (const auto& points : {column({3}), column({0, 9}), column({2, 2, 2, 2, 2})}) {
    const KSelection chosen = select_best_k(points, 4);
    EXPECT_EQ(chosen.k, 1);
    EXPECT_EQ(chosen.labels, std::vector<int>(static_cast<std::size_t>(points.size(0)), 0));
    EXPECT_TRUE(chosen.scores_by_k.empty());
  }
}

TEST(SelectBestK, RejectsBadSettings) {
  const auto points = column({0, 1, 10, 11});
  EXPECT_THROW(select_best_k(points, 1), ConfigError);
  EXPECT_THROW(select_best_k(points, 3, 0.9), ConfigError);
  EXPECT_THROW(select_best_k(points, 3, std::nan("")), ConfigError);
  EXPECT_THROW(select_best_k(torch::zeros({4}, torch::kFloat64), 3), ShapeError);
}

}  // namespace
}  // namespace cflrun::cluster
