#include <cflrun/algo/soft_clustering.hpp>

#include <set>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {
namespace {

TEST(SoftClustering, ImportanceWeightsCountArgMinMatchesWithTheSmoother) {
  // 10 samples, 3 centres: 1 sample is best on centre 0, 9 on centre 2, none on centre 1.
  auto losses = torch::ones({10, 3});
  losses[0][0] = 0.1;
  for (int i = 1; i < 10; ++i)
    losses[i][2] = 0.2;
  const auto u = importance_weights(losses, 1e-4);
  EXPECT_DOUBLE_EQ(u[0].item<double>(), 0.1);
  EXPECT_DOUBLE_EQ(u[1].item<double>(), 1e-4);  // sigma * n / n
  EXPECT_DOUBLE_EQ(u[2].item<double>(), 0.9);
  EXPECT_THROW(importance_weights(losses, 0.0), ConfigError);
  EXPECT_THROW(importance_weights(torch::ones({3}), 1e-4), ShapeError);
}

TEST(SoftClustering, AggregationWeightsFollowEquationSix) {
  // Client 0: u = (0.1, 0.9), n = 100; client 1: u = (0.9, 0.1), n = 300.
  const auto u = torch::tensor({{0.1, 0.9}, {0.9, 0.1}}, torch::kFloat64);
  const auto v = aggregation_weights(u, torch::tensor({100.0, 300.0}, torch::kFloat64));
  // Centre 0: 10 and 270 -> 10/280, 270/280. Centre 1: 90 and 30 -> 0.75, 0.25.
  EXPECT_NEAR(v[0][0].item<double>(), 10.0 / 280.0, 1e-15);
  EXPECT_NEAR(v[0][1].item<double>(), 270.0 / 280.0, 1e-15);
  EXPECT_NEAR(v[1][0].item<double>(), 0.75, 1e-15);
  EXPECT_NEAR(v[1][1].item<double>(), 0.25, 1e-15);
  EXPECT_THROW(aggregation_weights(u, torch::ones({3}, torch::kFloat64)), ShapeError);
}

TEST(SoftClustering, SelectionDrawsDistinctClientsInProportionToTheirWeights) {
  const auto v = torch::tensor({{0.7, 0.2, 0.1, 0.0}, {0.0, 0.0, 0.5, 0.5}}, torch::kFloat64);
  auto engine = core::make_engine(3, core::Purpose::kClustering);
  std::vector<int> first_pick(4, 0);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto chosen = select_clients(v, 2, engine);
    ASSERT_EQ(chosen.size(), 2U);
    EXPECT_NE(chosen[0][0], chosen[0][1]);
    EXPECT_NE(chosen[0][0], 3);  // zero weight is never drawn while others remain
    EXPECT_EQ(std::set<int>(chosen[1].begin(), chosen[1].end()), (std::set<int>{2, 3}));
    ++first_pick[static_cast<std::size_t>(chosen[0][0])];
  }
  EXPECT_NEAR(first_pick[0] / 2000.0, 0.7, 0.04);
  EXPECT_NEAR(first_pick[1] / 2000.0, 0.2, 0.04);
  // Drawing every client takes zero-weight ones last.
  EXPECT_EQ(select_clients(v, 4, engine)[1].size(), 4U);
  EXPECT_THROW(select_clients(v, 5, engine), ConfigError);
}

}  // namespace
}  // namespace cflrun::algo
