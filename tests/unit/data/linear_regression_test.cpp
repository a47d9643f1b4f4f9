#include <cflrun/data/linear_regression.hpp>

#include <cmath>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

LinearRegressionSpec spec_with(double separation) {
  LinearRegressionSpec spec;
  spec.clusters = 5;
  spec.clients_per_cluster = 2;
  spec.train_samples = 200;
  spec.test_samples = 50;
  spec.separation = separation;
  return spec;
}

TEST(LinearRegression, OptimalModelsAreUnitVectorsWithDistancesInDeltaToFiveDelta) {
  for (const double separation : {1.0, 0.3, 0.1, 0.001}) {
    const auto models = optimal_models(spec_with(separation));
    ASSERT_EQ(models.sizes(), (std::vector<std::int64_t>{5, 20}));
    EXPECT_TRUE(torch::allclose(models.norm(2, 1), torch::ones({5}), 1e-5, 1e-6)) << separation;
    const auto distances = torch::pdist(models.to(torch::kFloat64));
    EXPECT_GE(distances.min().item<double>(), separation * (1 - 1e-5)) << separation;
    EXPECT_LE(distances.max().item<double>(), 5 * separation * (1 + 1e-5)) << separation;
  }
}

TEST(LinearRegression, ClientsDrawTheirClustersLinearModelWithNoise) {
  auto spec = spec_with(0.5);
  spec.noise = 0.01;
  const auto data = linear_regression_data(spec);
  const auto models = optimal_models(spec);
  ASSERT_EQ(data.num_clients(), 10);
  EXPECT_EQ(data.true_clusters, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(data.sample_shape, (std::vector<std::int64_t>{20}));
  EXPECT_EQ(data.num_classes, 0);
  for (int client : {0, 7}) {
    const auto train = data.samples(client, /*train=*/true);
    ASSERT_EQ(train.inputs.sizes(), (std::vector<std::int64_t>{200, 20}));
    ASSERT_EQ(train.targets.sizes(), (std::vector<std::int64_t>{200}));
    const auto residual = train.targets - train.inputs.matmul(models[data.true_clusters[client]]);
    // The residual is the label noise: standard deviation sigma = 0.01.
    EXPECT_NEAR(residual.std().item<double>(), 0.01, 0.002);
    // Least squares on the client's data recovers its cluster's optimal model.
    const auto solution =
        std::get<0>(torch::linalg_lstsq(train.inputs, train.targets.unsqueeze(1)));
    EXPECT_LT((solution.squeeze(1) - models[data.true_clusters[client]]).norm().item<double>(),
              0.01);
    EXPECT_EQ(data.samples(client, /*train=*/false).inputs.size(0), 50);
  }
  // Deterministic, and train and test draws differ.
  EXPECT_TRUE(torch::equal(data.samples(3, true).inputs,
                           linear_regression_data(spec).samples(3, true).inputs));
  EXPECT_FALSE(
      torch::equal(data.samples(3, true).inputs.narrow(0, 0, 50), data.samples(3, false).inputs));
}

TEST(LinearRegression, GaussianOptimalModelsHaveTheAskedSpread) {
  auto spec = spec_with(1.0);
  spec.clusters = 200;
  spec.dimension = 10;
  spec.model_std = std::sqrt(10.0);  // FedSoft's synthetic data: weight variance 10
  const auto models = optimal_models(spec);
  ASSERT_EQ(models.sizes(), (std::vector<std::int64_t>{200, 10}));
  EXPECT_NEAR(models.var().item<double>(), 10.0, 0.8);
  EXPECT_NEAR(models.mean().item<double>(), 0.0, 0.2);
  spec.model_std = -1.0;
  EXPECT_THROW(optimal_models(spec), ConfigError);
}

TEST(LinearRegression, BadSettingsNameTheFlag) {
  auto spec = spec_with(2.0);
  EXPECT_THROW(optimal_models(spec), ConfigError);
  spec = spec_with(0.5);
  spec.noise = -1.0;
  EXPECT_THROW(optimal_models(spec), ConfigError);
  spec = spec_with(1.4);  // 5 unit vectors in 2-d cannot be pairwise >= 1.4 apart
  spec.dimension = 2;
  try {
    optimal_models(spec);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("lower --separation"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cflrun::data
