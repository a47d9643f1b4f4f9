#include <cflrun/cluster/adjusted_rand_index.hpp>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

// Expected values are exact fractions from the contingency-table formula
// ARI = (index - expected) / (max - expected), index = sum C(n_ij, 2),
// expected = sum C(a_i, 2) sum C(b_j, 2) / C(n, 2), max = (sum C(a_i, 2) + sum C(b_j, 2)) / 2,
// worked by hand and re-checked with Python's fractions.Fraction; they are the values
// sklearn.metrics.adjusted_rand_score returns (the sklearn user guide quotes 0.57 for the
// [0, 0, 1, 2] / [0, 0, 1, 1] pair).

TEST(AdjustedRandIndex, IdenticalLabelingsGiveOne) {
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0, 0, 1, 1}, {0, 0, 1, 1}), 1.0);
}

TEST(AdjustedRandIndex, RenamedClustersGiveOne) {
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0, 0, 1, 1}, {1, 1, 0, 0}), 1.0);
}

TEST(AdjustedRandIndex, SplittingEachClusterInTwoMatchesHandValue) {
  // index = 1 + 1 = 2, a = 3 + 3 = 6, b = 1 + 1 + 1 = 3, C(6, 2) = 15: expected = 18/15 = 1.2,
  // max = 4.5, ARI = 0.8 / 3.3 = 8/33.
  EXPECT_NEAR(adjusted_rand_index({0, 0, 0, 1, 1, 1}, {0, 0, 1, 1, 2, 2}), 8.0 / 33.0, 1e-15);
  EXPECT_NEAR(adjusted_rand_index({0, 0, 0, 1, 1, 1}, {0, 0, 1, 1, 2, 2}), 0.24242424242424243,
              1e-15);
}

TEST(AdjustedRandIndex, MergingTwoClustersMatchesHandValue) {
  // index = 1, a = 1, b = 2, C(4, 2) = 6: expected = 1/3, max = 1.5, ARI = (2/3)/(7/6) = 4/7.
  EXPECT_NEAR(adjusted_rand_index({0, 0, 1, 2}, {0, 0, 1, 1}), 4.0 / 7.0, 1e-15);
}

TEST(AdjustedRandIndex, CrossedLabelingsGiveMinusOneHalf) {
  // index = 0, a = b = 2, C(4, 2) = 6: expected = 2/3, max = 2, ARI = (-2/3)/(4/3) = -1/2.
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0, 0, 1, 1}, {0, 1, 0, 1}), -0.5);
}

TEST(AdjustedRandIndex, NonContiguousLabelsMatchHandValue) {
  // Relabelled copy of ({0,0,0,1,1,1,2,2,2,2}, {1,1,0,0,0,2,2,2,2,3}): index = 1 + 1 + 3 = 5,
  // a = 3 + 3 + 6 = 12, b = 3 + 1 + 6 + 0 = 10, C(10, 2) = 45: expected = 8/3, max = 11,
  // ARI = (7/3)/(25/3) = 7/25.
  const std::vector<int> truth{7, 7, 7, 40, 40, 40, 2, 2, 2, 2};
  const std::vector<int> predicted{9, 9, 100, 100, 100, 3, 3, 3, 3, 55};
  EXPECT_NEAR(adjusted_rand_index(truth, predicted), 0.28, 1e-15);
  EXPECT_NEAR(adjusted_rand_index(predicted, truth), 0.28, 1e-15);  // symmetric
}

TEST(AdjustedRandIndex, BothSingleClusterGivesOne) {
  // The formula is 0/0 here; scikit-learn returns 1.0.
  EXPECT_DOUBLE_EQ(adjusted_rand_index({3, 3, 3}, {0, 0, 0}), 1.0);
}

TEST(AdjustedRandIndex, BothAllSingletonsGivesOne) {
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0, 1, 2, 3}, {3, 1, 0, 2}), 1.0);
}

TEST(AdjustedRandIndex, SinglePointGivesOne) {
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0}, {5}), 1.0);
}

TEST(AdjustedRandIndex, OneClusterAgainstAllSingletonsGivesZero) {
  // index = 0, a = 6, b = 0: expected = 0, ARI = 0 / 3 = 0 (sklearn user guide: 0.0).
  EXPECT_DOUBLE_EQ(adjusted_rand_index({0, 0, 0, 0}, {0, 1, 2, 3}), 0.0);
}

TEST(AdjustedRandIndex, DifferentLengthsThrowShapeError) {
  EXPECT_THROW(adjusted_rand_index({0, 1}, {0, 1, 1}), ShapeError);
}

TEST(AdjustedRandIndex, EmptyLabelingsThrowShapeError) {
  EXPECT_THROW(adjusted_rand_index({}, {}), ShapeError);
}

}  // namespace
}  // namespace cflrun::cluster
