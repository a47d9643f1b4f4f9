#include <cflrun/cluster/distances.hpp>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

torch::Tensor matrix(std::vector<double> values, std::int64_t rows, std::int64_t columns) {
  return torch::tensor(values, torch::kFloat64).reshape({rows, columns});
}

TEST(SquaredDistances, MatchesHandComputedValues) {
  // (1,2) to (0,0): 1 + 4 = 5; to (4,6): 9 + 16 = 25. (0,0) to (0,0): 0; to (4,6): 16 + 36 = 52.
  const torch::Tensor distances =
      squared_distances(matrix({1, 2, 0, 0}, 2, 2), matrix({0, 0, 4, 6}, 2, 2));
  EXPECT_TRUE(torch::equal(distances, matrix({5, 25, 0, 52}, 2, 2)));
}

TEST(SquaredDistances, CoincidentPointsAreExactlyZeroApart) {
  const torch::Tensor point = matrix({0.1, 1e8 + 0.3, -7.7}, 1, 3);
  EXPECT_EQ(squared_distances(point, point.clone()).item<double>(), 0.0);
}

TEST(SquaredDistances, MismatchedWidthsThrowShapeError) {
  EXPECT_THROW(squared_distances(torch::zeros({2, 3}, torch::kFloat64),
                                 torch::zeros({2, 2}, torch::kFloat64)),
               ShapeError);
}

TEST(NearestCentres, TiesGoToTheLowestCentreIndex) {
  // The point 1 is 1 away from both centres, whichever order they come in.
  EXPECT_EQ(nearest_centres(matrix({1, 3}, 2, 1), matrix({0, 2}, 2, 1)), (std::vector<int>{0, 1}));
  EXPECT_EQ(nearest_centres(matrix({1, 3}, 2, 1), matrix({2, 0}, 2, 1)), (std::vector<int>{0, 0}));
}

TEST(NearestCentres, NoCentreThrowsShapeError) {
  EXPECT_THROW(
      nearest_centres(torch::zeros({2, 1}, torch::kFloat64), torch::zeros({0, 1}, torch::kFloat64)),
      ShapeError);
}

}  // namespace
}  // namespace cflrun::cluster
