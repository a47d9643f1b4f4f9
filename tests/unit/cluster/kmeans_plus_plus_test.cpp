#include <cflrun/cluster/kmeans_plus_plus.hpp>

#include <map>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::cluster {
namespace {

torch::Tensor column(std::vector<double> values) {
  const auto rows = static_cast<std::int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64).reshape({rows, 1});
}

std::multiset<double> values_of(const torch::Tensor& centres) {
  const torch::Tensor flat = centres.contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

TEST(KMeansPlusPlus, SecondCentreIsDrawnProportionallyToSquaredDistance) {
  // Points 0, 1, 3. First centre uniform; second with probability D^2 / sum D^2:
  // from 0: 1 w.p. 1/10, 3 w.p. 9/10; from 1: 0 w.p. 1/5, 3 w.p. 4/5; from 3: 0 w.p. 9/13,
  // 1 w.p. 4/13. So P({0,1}) = (1/10 + 1/5)/3 = 0.1, P({0,3}) = (9/10 + 9/13)/3 = 0.5308,
  // P({1,3}) = (4/5 + 4/13)/3 = 0.3692 (a uniform second draw would give 1/3 each).
  const torch::Tensor points = column({0, 1, 3});
  std::mt19937_64 engine = core::make_engine(3, core::Purpose::kClustering);
  constexpr int kDraws = 3000;
  std::map<std::multiset<double>, int> counts;
  for (int draw = 0; draw < kDraws; ++draw) {
    ++counts[values_of(kmeans_plus_plus_centres(points, 2, engine))];
  }
  // Binomial standard deviation <= sqrt(0.25 / 3000) = 0.009; allow about 4.5 of them.
  const auto frequency = [&](std::multiset<double> pair) { return counts[pair] / double(kDraws); };
  EXPECT_NEAR(frequency({0.0, 1.0}), 0.1, 0.04);
  EXPECT_NEAR(frequency({0.0, 3.0}), 0.5308, 0.04);
  EXPECT_NEAR(frequency({1.0, 3.0}), 0.3692, 0.04);
}

TEST(KMeansPlusPlus, NeverRepeatsAPointWhileDistinctPointsRemain) {
  const torch::Tensor points = column({5, -1, 2, 8, 0.5, 3});
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 engine = core::make_engine(seed, core::Purpose::kClustering);
    EXPECT_EQ(values_of(kmeans_plus_plus_centres(points, 6, engine)), values_of(points));
  }
}

TEST(KMeansPlusPlus, FallsBackToUnchosenPointsWhenAllDistancesAreZero) {
  // Two distinct values among three points: the third centre must repeat a value.
  const torch::Tensor points = column({4, 4, 9});
  std::mt19937_64 engine = core::make_engine(1, core::Purpose::kClustering);
  const std::multiset<double> centres = values_of(kmeans_plus_plus_centres(points, 3, engine));
  EXPECT_EQ(centres, (std::multiset<double>{4, 4, 9}));
}

TEST(KMeansPlusPlus, IsDeterministicGivenTheEngineState) {
  at::Generator generator = core::make_torch_generator(9, core::Purpose::kClustering);
  const torch::Tensor points = torch::rand({30, 4}, generator, torch::kFloat64);
  std::mt19937_64 first = core::make_engine(9, core::Purpose::kClustering);
  std::mt19937_64 second = core::make_engine(9, core::Purpose::kClustering);
  EXPECT_TRUE(torch::equal(kmeans_plus_plus_centres(points, 5, first),
                           kmeans_plus_plus_centres(points, 5, second)));
  EXPECT_EQ(first(), second());
}

TEST(KMeansPlusPlus, KOutOfRangeThrowsConfigError) {
  std::mt19937_64 engine = core::make_engine(1, core::Purpose::kClustering);
  EXPECT_THROW(kmeans_plus_plus_centres(column({1, 2}), 3, engine), ConfigError);
  EXPECT_THROW(kmeans_plus_plus_centres(column({1, 2}), 0, engine), ConfigError);
}

}  // namespace
}  // namespace cflrun::cluster
