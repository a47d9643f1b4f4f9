#include <cflrun/run/model_set.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

const model::NetworkShape kCnnShape{{1, 28, 28}, 10};

TEST(ModelSet, DifferentInitialisationGivesEachModelItsOwnParameters) {
  ModelSet models(3, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  models.initialize(/*seed=*/4, /*same=*/false);
  EXPECT_FALSE(torch::equal(models.states()[0], models.states()[1]));
  EXPECT_FALSE(torch::equal(models.states()[1], models.states()[2]));
  ModelSet again(5, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  again.initialize(4, false);
  // Model j's stream does not depend on how many models there are.
  EXPECT_TRUE(torch::equal(models.states()[2], again.states()[2]));
}

TEST(ModelSet, SameInitialisationGivesEveryModelModelZerosParameters) {
  ModelSet models(3, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  models.initialize(4, /*same=*/true);
  EXPECT_TRUE(torch::equal(models.states()[0], models.states()[1]));
  EXPECT_TRUE(torch::equal(models.states()[0], models.states()[2]));
  ModelSet different(3, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  different.initialize(4, false);
  EXPECT_TRUE(torch::equal(models.states()[0], different.states()[0]));
}

// --init-scheme unit_sphere (the official CLoVE code's linear regression): every initial theta has
// norm 1, each model its own direction from its own stream, the same on every call.
TEST(ModelSet, UnitSphereDrawGivesEachLinearModelItsOwnUnitNormTheta) {
  const model::NetworkShape linear_shape{{20}, 0};
  ModelSet models(3, model::Architecture::kLinear, linear_shape, torch::kCPU);
  models.draw_on_unit_sphere();
  models.initialize(/*seed=*/7, /*same=*/false);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(models.states()[j].norm().item<double>(), 1.0, 1e-6) << "model " << j;
  }
  EXPECT_FALSE(torch::equal(models.states()[0], models.states()[1]));
  EXPECT_TRUE(torch::equal(models.states()[2], models.fresh_state(7, 2)));
  ModelSet libtorch(3, model::Architecture::kLinear, linear_shape, torch::kCPU);
  libtorch.initialize(7, false);  // LibTorch's init: uniform in +-1/sqrt(20), norm about 0.58
  EXPECT_LT(libtorch.states()[0].norm().item<double>(), 0.9);
}

TEST(ModelSet, AveragesEachModelOverItsClientsAndKeepsUnusedModels) {
  ModelSet models(2, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  models.initialize(1);
  const auto p = models.state_size();
  const auto before = models.states()[1].clone();
  // Model 0: clients with 100 and 300 samples and states of all 1s and all 3s -> 2.5 everywhere.
  std::vector<double> sums(static_cast<std::size_t>(2 * (p + 1)), 0.0);
  for (std::int64_t i = 0; i < p; ++i) {
    sums[static_cast<std::size_t>(i)] = 100 * 1.0 + 300 * 3.0;
  }
  sums[static_cast<std::size_t>(2 * p)] = 400;
  models.average(sums);
  EXPECT_TRUE(torch::equal(models.states()[0], torch::full({p}, 2.5F)));
  EXPECT_TRUE(torch::equal(models.states()[1], before));
}

}  // namespace
}  // namespace cflrun::run

namespace cflrun::run {
namespace {

TEST(ModelSet, GradientStepMovesEachModelAgainstItsMeanGradient) {
  ModelSet models(2, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  models.initialize(2);
  const auto p = models.state_size();
  const auto before = models.states().clone();
  // Model 1: gradients of all 2s (n = 100) and all 6s (n = 300) -> mean 5; lr 0.1 -> -0.5.
  std::vector<double> sums(static_cast<std::size_t>(2 * (p + 1)), 0.0);
  for (std::int64_t i = 0; i < p; ++i) {
    sums[static_cast<std::size_t>(p + i)] = 100 * 2.0 + 300 * 6.0;
  }
  sums[static_cast<std::size_t>(2 * p + 1)] = 400;
  models.gradient_step(sums, 0.1);
  EXPECT_TRUE(torch::equal(models.states()[0], before[0]));
  EXPECT_TRUE(torch::allclose(models.states()[1], before[1] - 0.5, /*rtol=*/0, /*atol=*/1e-6));
}

}  // namespace
}  // namespace cflrun::run

namespace cflrun::run {
namespace {

TEST(ModelSet, WeightSharingAveragesSharedLayersOverAllClientsAndKeepsHeadsPerModel) {
  // IFCA Sec. 4.1: conv1 and conv2 shared, fc (256 * 10 + 10 = 2 570 floats) per model.
  ModelSet models(2, model::Architecture::kCnn, kCnnShape, torch::kCPU);
  models.share_all_but_last_layers(1);
  const auto p = models.state_size();
  const auto shared = models.shared_size();
  EXPECT_EQ(p - shared, 2570);
  models.initialize(3);
  // One shared copy from the start: the models differ only in their heads.
  EXPECT_TRUE(torch::equal(models.states()[0].narrow(0, 0, shared),
                           models.states()[1].narrow(0, 0, shared)));
  EXPECT_FALSE(torch::equal(models.states()[0].narrow(0, shared, p - shared),
                            models.states()[1].narrow(0, shared, p - shared)));
  // Model 0: one client (n = 100) of all 1s; model 1: one client (n = 300) of all 5s.
  std::vector<double> sums(static_cast<std::size_t>(2 * (p + 1)), 0.0);
  for (std::int64_t i = 0; i < p; ++i) {
    sums[static_cast<std::size_t>(i)] = 100 * 1.0;
    sums[static_cast<std::size_t>(p + i)] = 300 * 5.0;
  }
  sums[static_cast<std::size_t>(2 * p)] = 100;
  sums[static_cast<std::size_t>(2 * p + 1)] = 300;
  models.average(sums);
  // Shared floats: (100 * 1 + 300 * 5) / 400 = 4 in both models; heads: each its own client.
  for (int j = 0; j < 2; ++j) {
    EXPECT_TRUE(torch::equal(models.states()[j].narrow(0, 0, shared), torch::full({shared}, 4.0F)));
  }
  EXPECT_TRUE(torch::equal(models.states()[0].narrow(0, shared, p - shared),
                           torch::full({p - shared}, 1.0F)));
  EXPECT_TRUE(torch::equal(models.states()[1].narrow(0, shared, p - shared),
                           torch::full({p - shared}, 5.0F)));
  EXPECT_THROW(models.share_all_but_last_layers(3), ConfigError);  // the CNN has 3 layers
}

}  // namespace
}  // namespace cflrun::run
