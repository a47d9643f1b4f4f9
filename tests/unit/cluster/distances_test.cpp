#include <cflrun/cluster/distances.hpp>

#include <gtest/gtest.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

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

TEST(SquaredDistances, EachEntrySumsItsSquaredDifferencesInIndexOrderOnAnyThreadCount) {
  // 1 000 points (several blocks of the CPU loop, one partial) against 7 centres in 13 dimensions:
  // every entry equals the sum in index order bit for bit, on 1 and on 2 threads, and the
  // broadcast form within rounding.
  at::Generator generator = at::detail::createCPUGenerator(3);
  const torch::Tensor points = torch::randn({1000, 13}, generator, torch::kFloat64);
  const torch::Tensor centres = torch::randn({7, 13}, generator, torch::kFloat64) * 3.0;
  torch::Tensor in_order = torch::empty({1000, 7}, torch::kFloat64);
  for (std::int64_t i = 0; i < 1000; ++i) {
    for (std::int64_t j = 0; j < 7; ++j) {
      double sum = 0.0;
      for (std::int64_t d = 0; d < 13; ++d) {
        const double difference = points[i][d].item<double>() - centres[j][d].item<double>();
        sum += difference * difference;
      }
      in_order[i][j] = sum;
    }
  }
  const int threads = torch::get_num_threads();
  for (const int use : {1, 2}) {
    torch::set_num_threads(use);
    EXPECT_TRUE(torch::equal(squared_distances(points, centres), in_order)) << use << " threads";
  }
  torch::set_num_threads(threads);
  const torch::Tensor broadcast =
      (points.unsqueeze(1) - centres.unsqueeze(0)).square().sum(/*dim=*/2);
  EXPECT_TRUE(torch::allclose(in_order, broadcast, /*rtol=*/1e-14, /*atol=*/0.0));
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

TEST(NearestCentres, WithDistancesGivesTheNearestEntryOfEachRow) {
  // Points 1, 3 and 10 against centres 0, 2 and 9: 1 is 1 from 0 and from 2 (the tie goes to 0),
  // 3 is 1 from 2, 10 is 1 from 9.
  const NearestCentres nearest =
      nearest_centres_with_distances(matrix({1, 3, 10}, 3, 1), matrix({0, 2, 9}, 3, 1));
  EXPECT_EQ(nearest.centre, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(nearest.squared_distance, (std::vector<double>{1, 1, 1}));
}

TEST(NearestCentres, NoCentreThrowsShapeError) {
  EXPECT_THROW(
      nearest_centres(torch::zeros({2, 1}, torch::kFloat64), torch::zeros({0, 1}, torch::kFloat64)),
      ShapeError);
}

}  // namespace
}  // namespace cflrun::cluster
