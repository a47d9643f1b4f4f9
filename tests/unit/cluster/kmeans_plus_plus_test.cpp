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
TEST(KMeansPlusPlus, GreedyCandidatesAreScikitLearns) {
  // scikit-learn's _kmeans_plusplus: n_local_trials = 2 + int(np.log(n_clusters)).
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(1), 2);
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(2), 2);
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(3), 3);
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(5), 3);
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(10), 4);
  EXPECT_EQ(greedy_kmeans_plus_plus_candidates(21), 5);
}

TEST(KMeansPlusPlus, GreedySeedingKeepsTheCandidateOfLeastPotential) {
  // Points 0, 1, 3 with first centre 0 or 1 or 3. With many candidates the second centre is the
  // one leaving the least potential: from 0 that is 3 (potential 1) over 1 (potential 9), from 1 it
  // is 3 (1) over 0 (4), from 3 it is 0 (1) over 1 (1 as well: tie, the first drawn wins).
  // So {0, 1} (potential >= 4) must never be chosen once 20 candidates are drawn.
  const torch::Tensor points = column({0, 1, 3});
  std::mt19937_64 engine = core::make_engine(5, core::Purpose::kClustering);
  int pairs_01 = 0;
  for (int draw = 0; draw < 500; ++draw) {
    pairs_01 += values_of(kmeans_plus_plus_centres(points, 2, engine, 20)) ==
                std::multiset<double>{0.0, 1.0};
  }
  EXPECT_EQ(pairs_01, 0);
  EXPECT_THROW(kmeans_plus_plus_centres(points, 2, engine, 0), ConfigError);
}

TEST(KMeansPlusPlus, GreedySeedingLeavesALowerPotentialThanPlain) {
  // The potential of a seeding is sum_x min_c |x - c|^2. Greedy k-means++ keeps, at every step, the
  // candidate that lowers it most, so on average it ends lower than the plain draw. Data: a wide
  // group of 1 000 points in [0, 4] and single points at 10, 20, 30; 300 seedings of k = 4 each.
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i)
    values.push_back(0.004 * i);
  for (const double far : {10.0, 20.0, 30.0})
    values.push_back(far);
  const torch::Tensor points = column(values);
  const auto mean_potential = [&](int candidates) {
    std::mt19937_64 engine = core::make_engine(11, core::Purpose::kClustering);
    double total = 0.0;
    for (int draw = 0; draw < 300; ++draw) {
      const torch::Tensor centres = kmeans_plus_plus_centres(points, 4, engine, candidates);
      total += (points - centres.transpose(0, 1)).square().amin(1).sum().item<double>();
    }
    return total / 300.0;
  };
  const double plain = mean_potential(1);
  const double greedy = mean_potential(greedy_kmeans_plus_plus_candidates(4));
  EXPECT_LT(greedy, 0.8 * plain) << "mean potential: plain " << plain << ", greedy " << greedy;
}

}  // namespace cflrun::cluster
