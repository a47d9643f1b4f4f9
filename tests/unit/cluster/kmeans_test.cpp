#include <cflrun/cluster/kmeans.hpp>

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::cluster {
namespace {

constexpr std::int64_t kBlobSize = 10;

torch::Tensor column(std::vector<double> values) {
  const auto rows = static_cast<std::int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64).reshape({rows, 1});
}

/// Three blobs of kBlobSize points, N(centre, 0.5^2 I) around (0,0), (10,0), (0,10), in that order.
torch::Tensor three_blobs() {
  at::Generator generator = core::make_torch_generator(5, core::Purpose::kClustering);
  const torch::Tensor centres =
      torch::tensor({0.0, 0.0, 10.0, 0.0, 0.0, 10.0}, torch::kFloat64).reshape({3, 2});
  return centres.repeat_interleave(kBlobSize, /*dim=*/0) +
         0.5 * torch::randn({3 * kBlobSize, 2}, generator, torch::kFloat64);
}

std::mt19937_64 engine_for(std::uint64_t seed) {
  return core::make_engine(seed, core::Purpose::kClustering);
}

TEST(KMeans, RecoversThreeWellSeparatedBlobs) {
  const torch::Tensor points = three_blobs();
  std::vector<int> truth;
  for (int blob = 0; blob < 3; ++blob) {
    truth.insert(truth.end(), kBlobSize, blob);
  }
  std::mt19937_64 engine = engine_for(1);
  const KMeansResult result = kmeans(points, 3, KMeansOptions{}, engine);

  EXPECT_DOUBLE_EQ(adjusted_rand_index(truth, result.labels), 1.0);
  for (int blob = 0; blob < 3; ++blob) {
    const int label = result.labels[blob * kBlobSize];
    const torch::Tensor blob_mean = points.narrow(0, blob * kBlobSize, kBlobSize).mean(0);
    EXPECT_TRUE(torch::allclose(result.centroids[label], blob_mean, 0.0, 1e-12));
  }
  const torch::Tensor assigned =
      result.centroids.index_select(0, torch::tensor(result.labels, torch::kInt64));
  EXPECT_NEAR(result.inertia, (points - assigned).square().sum().item<double>(), 1e-9);
  EXPECT_EQ(result.centroids.sizes(), (torch::IntArrayRef{3, 2}));
}

TEST(KMeans, TenRestartsFindTheOptimumThatOneStartCanMiss) {
  // Points 0, 1, 2, 3, 6 with k = 2. The optimum {0,1,2,3} {6} has inertia
  // (1.5^2 + 0.5^2 + 0.5^2 + 1.5^2) + 0 = 5. The split {0,1,2} {3,6} is a Lloyd fixed point
  // (centres 1 and 4.5: 2 is nearer 1, 3 is nearer 4.5) with inertia (1 + 0 + 1) + (1.5^2 +
  // 1.5^2) = 6.5. Enumerating the k-means++ seedings exactly shows one start ends there with
  // probability 0.355, so 10 starts all miss the optimum with probability 0.355^10 = 3e-5.
  const torch::Tensor points = column({0, 1, 2, 3, 6});
  KMeansOptions one_start;
  one_start.restarts = 1;
  int local_optima = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 engine = engine_for(seed);
    const double inertia = kmeans(points, 2, one_start, engine).inertia;
    EXPECT_TRUE(inertia == 5.0 || inertia == 6.5) << "seed " << seed << " inertia " << inertia;
    local_optima += inertia == 6.5 ? 1 : 0;
  }
  EXPECT_GE(local_optima, 1) << "no single start of 20 ended in the local optimum";

  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 engine = engine_for(seed);
    const KMeansResult result = kmeans(points, 2, KMeansOptions{}, engine);
    EXPECT_DOUBLE_EQ(result.inertia, 5.0) << "seed " << seed;
    EXPECT_EQ(std::count(result.labels.begin(), result.labels.end(), result.labels[0]), 4);
    EXPECT_NE(result.labels[4], result.labels[0]);
  }
}

TEST(KMeans, SameEngineSeedGivesSameResult) {
  at::Generator generator = core::make_torch_generator(4, core::Purpose::kClustering);
  const torch::Tensor points = torch::rand({40, 3}, generator, torch::kFloat64);
  std::mt19937_64 first = engine_for(7);
  std::mt19937_64 second = engine_for(7);
  const KMeansResult a = kmeans(points, 4, KMeansOptions{}, first);
  const KMeansResult b = kmeans(points, 4, KMeansOptions{}, second);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_TRUE(torch::equal(a.centroids, b.centroids));
  EXPECT_EQ(a.inertia, b.inertia);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(first(), second());  // both engines advanced by the same draws
}

TEST(KMeans, RestartsSideBySideEqualStartsOneAfterAnotherOnAnyThreadCount) {
  // 300 points in 5 overlapping blobs, so the starts end in different local optima: the result of
  // 10 restarts is the start of lowest inertia (the earliest on ties) among 10 single starts
  // drawn one after another from the same engine, bit for bit, on 1 and on 2 threads.
  at::Generator generator = core::make_torch_generator(6, core::Purpose::kClustering);
  const torch::Tensor points = torch::randn({300, 4}, generator, torch::kFloat64) * 2.0 +
                               torch::arange(300, torch::kFloat64).remainder(5).unsqueeze(1);
  KMeansOptions one_start;
  one_start.restarts = 1;
  std::mt19937_64 sequential = engine_for(9);
  KMeansResult expected;
  std::set<double> inertias;
  for (int start = 0; start < 10; ++start) {
    KMeansResult result = kmeans(points, 5, one_start, sequential);
    inertias.insert(result.inertia);
    if (start == 0 || result.inertia < expected.inertia) {
      expected = std::move(result);
    }
  }
  ASSERT_GT(inertias.size(), 1U) << "every start found the same optimum: the test shows nothing";
  const int threads = torch::get_num_threads();
  for (const int use : {1, 2}) {
    torch::set_num_threads(use);
    std::mt19937_64 engine = engine_for(9);
    const KMeansResult result = kmeans(points, 5, KMeansOptions{}, engine);
    EXPECT_EQ(result.labels, expected.labels) << use << " threads";
    EXPECT_TRUE(torch::equal(result.centroids, expected.centroids)) << use << " threads";
    EXPECT_EQ(result.inertia, expected.inertia) << use << " threads";
    EXPECT_EQ(engine(), sequential()) << use << " threads";  // the same draws
    sequential = engine_for(9);
    for (int start = 0; start < 10; ++start) {
      kmeans(points, 5, one_start, sequential);
    }
  }
  torch::set_num_threads(threads);
}

TEST(KMeans, KEqualToNumberOfPointsGivesEachPointItsOwnCluster) {
  const torch::Tensor points = column({3, -2, 7, 0.5, 11});
  std::mt19937_64 engine = engine_for(2);
  const KMeansResult result = kmeans(points, 5, KMeansOptions{}, engine);
  EXPECT_EQ(std::set<int>(result.labels.begin(), result.labels.end()).size(), 5U);
  EXPECT_EQ(result.inertia, 0.0);
  const torch::Tensor own_centroids =
      result.centroids.index_select(0, torch::tensor(result.labels, torch::kInt64));
  EXPECT_TRUE(torch::equal(own_centroids, points));
}

TEST(KMeans, FewerDistinctPointsThanKStillGivesKCentroidsAndZeroInertia) {
  const torch::Tensor points = column({4, 4, 4, 9});
  std::mt19937_64 engine = engine_for(3);
  const KMeansResult result = kmeans(points, 3, KMeansOptions{}, engine);
  ASSERT_EQ(result.labels.size(), 4U);
  EXPECT_EQ(result.centroids.sizes(), (torch::IntArrayRef{3, 1}));
  EXPECT_EQ(result.inertia, 0.0);
  for (const int label : result.labels) {
    EXPECT_TRUE(label >= 0 && label < 3);
  }
  EXPECT_EQ(result.labels[0], result.labels[1]);
  EXPECT_EQ(result.labels[0], result.labels[2]);
  EXPECT_NE(result.labels[0], result.labels[3]);
}

TEST(KMeans, SingleClusterIsTheMeanOfAllPoints) {
  const torch::Tensor points = column({1, 2, 6});
  std::mt19937_64 engine = engine_for(4);
  const KMeansResult result = kmeans(points, 1, KMeansOptions{}, engine);
  EXPECT_EQ(result.labels, (std::vector<int>{0, 0, 0}));
  EXPECT_DOUBLE_EQ(result.centroids.item<double>(), 3.0);
  EXPECT_DOUBLE_EQ(result.inertia, 4.0 + 1.0 + 9.0);
}

TEST(KMeans, StopsAtTheIterationLimit) {
  const torch::Tensor points = three_blobs();
  KMeansOptions options;
  options.max_iterations = 1;
  std::mt19937_64 engine = engine_for(1);
  EXPECT_EQ(kmeans(points, 3, options, engine).iterations, 1);
}

TEST(KMeans, KOutOfRangeThrowsConfigErrorNamingTheBounds) {
  const torch::Tensor points = column({1, 2, 3, 4});
  std::mt19937_64 engine = engine_for(1);
  try {
    kmeans(points, 5, KMeansOptions{}, engine);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "k-means: k must be between 1 and the number of points (4), but got 5");
  }
  EXPECT_THROW(kmeans(points, 0, KMeansOptions{}, engine), ConfigError);
}

TEST(KMeans, InvalidOptionsThrowConfigError) {
  const torch::Tensor points = column({1, 2, 3, 4});
  std::mt19937_64 engine = engine_for(1);
  KMeansOptions no_restarts;
  no_restarts.restarts = 0;
  EXPECT_THROW(kmeans(points, 2, no_restarts, engine), ConfigError);
  KMeansOptions negative_tolerance;
  negative_tolerance.tolerance = -1.0;
  EXPECT_THROW(kmeans(points, 2, negative_tolerance, engine), ConfigError);
}

TEST(KMeans, PointsThatAreNotAFloat64MatrixThrowShapeErrorNamingTheShape) {
  std::mt19937_64 engine = engine_for(1);
  try {
    kmeans(torch::zeros({4}, torch::kFloat64), 1, KMeansOptions{}, engine);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& error) {
    EXPECT_NE(std::string(error.what()).find("[4]"), std::string::npos) << error.what();
  }
  EXPECT_THROW(kmeans(torch::zeros({4, 2}, torch::kFloat32), 1, KMeansOptions{}, engine),
               ShapeError);
  EXPECT_THROW(kmeans(torch::zeros({0, 2}, torch::kFloat64), 1, KMeansOptions{}, engine),
               ShapeError);
}

TEST(KMeans, NonFinitePointsThrowDataError) {
  std::mt19937_64 engine = engine_for(1);
  EXPECT_THROW(
      kmeans(column({1, std::numeric_limits<double>::quiet_NaN()}), 1, KMeansOptions{}, engine),
      DataError);
  EXPECT_THROW(
      kmeans(column({1, std::numeric_limits<double>::infinity()}), 1, KMeansOptions{}, engine),
      DataError);
}

}  // namespace
}  // namespace cflrun::cluster
