#include <cflrun/cluster/hungarian.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::cluster {
namespace {

torch::Tensor matrix(std::vector<double> values, std::int64_t rows, std::int64_t columns) {
  return torch::tensor(values, torch::kFloat64).reshape({rows, columns});
}

double total_cost(const torch::Tensor& cost, const std::vector<int>& column_of_row) {
  const auto entries = cost.accessor<double, 2>();
  double total = 0.0;
  for (std::size_t row = 0; row < column_of_row.size(); ++row) {
    total += entries[static_cast<std::int64_t>(row)][column_of_row[row]];
  }
  return total;
}

/// Minimum over all injective row -> column maps, by enumerating the permutations of columns.
double brute_force_minimum(const torch::Tensor& cost) {
  std::vector<int> columns(cost.size(1));
  std::iota(columns.begin(), columns.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    best = std::min(
        best, total_cost(cost, std::vector<int>(columns.begin(), columns.begin() + cost.size(0))));
  } while (std::next_permutation(columns.begin(), columns.end()));
  return best;
}

bool distinct(std::vector<int> columns) {
  std::sort(columns.begin(), columns.end());
  return std::adjacent_find(columns.begin(), columns.end()) == columns.end();
}

TEST(MinCostMatching, Solves3x3WithHandComputedOptimum) {
  // Totals of the 6 permutations: (0,1,2) 6, (0,2,1) 11, (1,0,2) 5, (1,2,0) 9, (2,0,1) 7,
  // (2,1,0) 6: the unique optimum is rows -> columns (1, 0, 2), cost 1 + 2 + 2 = 5.
  const torch::Tensor cost = matrix({4, 1, 3, 2, 0, 5, 3, 2, 2}, 3, 3);
  EXPECT_EQ(min_cost_matching(cost), (std::vector<int>{1, 0, 2}));
}

TEST(MinCostMatching, Solves4x4WithHandComputedOptimum) {
  // Optimum 69 + 37 + 11 + 23 = 140 with rows -> columns (2, 1, 0, 3); the runner-up, (3, 1, 2, 0),
  // costs 92 + 37 + 5 + 8 = 142 (all 24 permutations enumerated by hand/Python).
  const torch::Tensor cost =
      matrix({82, 83, 69, 92, 77, 37, 49, 92, 11, 69, 5, 86, 8, 9, 98, 23}, 4, 4);
  const std::vector<int> matching = min_cost_matching(cost);
  EXPECT_EQ(matching, (std::vector<int>{2, 1, 0, 3}));
  EXPECT_DOUBLE_EQ(total_cost(cost, matching), 140.0);
}

TEST(MinCostMatching, MatchesBruteForceOnRandom6x6) {
  at::Generator generator = core::make_torch_generator(11, core::Purpose::kClustering);
  for (int trial = 0; trial < 20; ++trial) {
    const torch::Tensor cost = torch::rand({6, 6}, generator, torch::kFloat64) * 10.0;
    const std::vector<int> matching = min_cost_matching(cost);
    ASSERT_EQ(matching.size(), 6U);
    EXPECT_TRUE(distinct(matching));
    EXPECT_NEAR(total_cost(cost, matching), brute_force_minimum(cost), 1e-9) << "trial " << trial;
  }
}

TEST(MinCostMatching, GivesEachRowADistinctColumnWhenRectangular) {
  // Rows -> columns (1, 0) cost 2 + 1 = 3; every other choice costs at least 4.
  const torch::Tensor cost = matrix({1, 2, 3, 1, 5, 9}, 2, 3);
  EXPECT_EQ(min_cost_matching(cost), (std::vector<int>{1, 0}));

  at::Generator generator = core::make_torch_generator(12, core::Purpose::kClustering);
  for (int trial = 0; trial < 10; ++trial) {
    const torch::Tensor wide = torch::rand({3, 5}, generator, torch::kFloat64);
    const std::vector<int> matching = min_cost_matching(wide);
    EXPECT_TRUE(distinct(matching));
    EXPECT_NEAR(total_cost(wide, matching), brute_force_minimum(wide), 1e-12) << "trial " << trial;
  }
}

TEST(MinCostMatching, TiesAreBrokenDeterministically) {
  const torch::Tensor cost = torch::zeros({3, 3}, torch::kFloat64);
  EXPECT_EQ(min_cost_matching(cost), (std::vector<int>{0, 1, 2}));
  // Two zero-cost matchings, {1, 2, 0} and {2, 0, 1}: the first row takes the lowest column it
  // can (pinned: a different tie-break renames CLoVE's models and changes every fixture).
  const torch::Tensor two_optima =
      torch::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0}, torch::kFloat64).reshape({3, 3});
  EXPECT_EQ(min_cost_matching(two_optima), (std::vector<int>{1, 2, 0}));
}

TEST(MinCostMatching, NoRowsGiveAnEmptyMatching) {
  EXPECT_TRUE(min_cost_matching(torch::zeros({0, 3}, torch::kFloat64)).empty());
}

TEST(MinCostMatching, MoreRowsThanColumnsThrowShapeError) {
  EXPECT_THROW(min_cost_matching(torch::zeros({3, 2}, torch::kFloat64)), ShapeError);
}

TEST(MinCostMatching, NonFiniteCostThrowsDataError) {
  EXPECT_THROW(min_cost_matching(matrix({1, std::numeric_limits<double>::quiet_NaN(), 0, 1}, 2, 2)),
               DataError);
  EXPECT_THROW(min_cost_matching(matrix({1, std::numeric_limits<double>::infinity(), 0, 1}, 2, 2)),
               DataError);
}

TEST(MinCostMatching, WrongRankOrTypeThrowsShapeError) {
  EXPECT_THROW(min_cost_matching(torch::zeros({4}, torch::kFloat64)), ShapeError);
  EXPECT_THROW(min_cost_matching(torch::zeros({2, 2}, torch::kFloat32)), ShapeError);
}

}  // namespace
}  // namespace cflrun::cluster
