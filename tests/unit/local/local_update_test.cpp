#include <cflrun/local/local_update.hpp>

#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::local {
namespace {

constexpr std::int64_t kDim = 3;
constexpr std::int64_t kSamples = 200;

struct Regression {
  torch::Tensor inputs;   // [n, d]
  torch::Tensor targets;  // [n]
};

Regression regression_data() {
  auto generator = core::make_torch_generator(5, core::Purpose::kSyntheticData, 1);
  const auto inputs = torch::randn({kSamples, kDim}, generator, torch::kFloat32);
  return {inputs, inputs.matmul(torch::tensor({1.0F, 2.0F, 3.0F}))};
}

LocalUpdateSettings full_batch_settings() {
  LocalUpdateSettings settings;
  settings.objective = model::Objective::kRegression;
  settings.batch_size = kSamples;
  settings.local_epochs = 3000;
  settings.learning_rate = 0.01;
  return settings;
}

/// Trains a fresh linear model (no bias) and returns its weights [d].
torch::Tensor train(const Regression& data, const LocalUpdateSettings& settings) {
  auto model = model::make_network(model::Architecture::kLinear, model::NetworkShape{{kDim}, 0});
  auto generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate);
  local_update(*model, data.inputs, data.targets, settings, generator);
  return model::flatten_state(*model);
}

TEST(LocalUpdate, WithoutProximalTermFitsTheData) {
  const auto w = train(regression_data(), full_batch_settings());
  EXPECT_TRUE(torch::allclose(w, torch::tensor({1.0F, 2.0F, 3.0F}), 0.0, 1e-3)) << w;
}

TEST(LocalUpdate, ProximalTermPullsTowardsTheImportanceWeightedCenters) {
  // FedSoft Eq. 4: minimise mean (x.w - y)^2 + (mu/2) sum_s u_s ||w - c_s||^2, whose minimiser
  // solves (2/n X^T X + mu U I) w = 2/n X^T y + mu sum_s u_s c_s with U = sum_s u_s.
  const auto data = regression_data();
  auto settings = full_batch_settings();
  settings.proximal.mu = 2.0;
  settings.proximal.centers = torch::tensor({{0.0F, 0.0F, 0.0F}, {-4.0F, 0.0F, 4.0F}});
  settings.proximal.importance = torch::tensor({0.25, 0.75}, torch::kFloat64);
  const auto x = data.inputs.to(torch::kFloat64);
  const auto lhs = 2.0 / kSamples * x.t().matmul(x) + 2.0 * torch::eye(kDim, torch::kFloat64);
  const auto rhs = 2.0 / kSamples * x.t().matmul(data.targets.to(torch::kFloat64)) +
                   2.0 * torch::tensor({-3.0, 0.0, 3.0}, torch::kFloat64);
  const auto expected = torch::linalg_solve(lhs, rhs).to(torch::kFloat32);
  const auto w = train(data, settings);
  EXPECT_TRUE(torch::allclose(w, expected, 0.0, 2e-3)) << w << expected;
  EXPECT_FALSE(torch::allclose(w, torch::tensor({1.0F, 2.0F, 3.0F}), 0.0, 0.1));
}

TEST(LocalUpdate, AGivenOptimizerKeepsItsMomentsAcrossUpdates) {
  const auto data = regression_data();
  auto settings = full_batch_settings();
  settings.local_epochs = 5;
  auto model = model::make_network(model::Architecture::kLinear, model::NetworkShape{{kDim}, 0});
  const auto start = model::flatten_state(*model);
  const auto two_updates = [&](torch::optim::Optimizer* optimizer) {
    model::load_flat_state(*model, start);
    settings.optimizer = optimizer;
    for (int update = 0; update < 2; ++update) {
      auto generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate, 0, update);
      local_update(*model, data.inputs, data.targets, settings, generator);
    }
    return model::flatten_state(*model);
  };
  const auto fresh = two_updates(nullptr);
  torch::optim::Adam kept(model->parameters(), torch::optim::AdamOptions(settings.learning_rate));
  const auto persistent = two_updates(&kept);
  // Adam's first steps are lr-sized whatever the gradient; with carried-over moments the second
  // update's steps are bias-corrected differently, so the two paths end apart.
  EXPECT_FALSE(torch::allclose(fresh, persistent, 0.0, 1e-6)) << fresh << persistent;
  // One update with the kept optimizer equals one fresh update (no state yet).
  torch::optim::Adam first(model->parameters(), torch::optim::AdamOptions(settings.learning_rate));
  model::load_flat_state(*model, start);
  settings.optimizer = &first;
  auto generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate, 0, 0);
  local_update(*model, data.inputs, data.targets, settings, generator);
  const auto with_given = model::flatten_state(*model);
  model::load_flat_state(*model, start);
  settings.optimizer = nullptr;
  auto again = core::make_torch_generator(1, core::Purpose::kLocalUpdate, 0, 0);
  local_update(*model, data.inputs, data.targets, settings, again);
  EXPECT_TRUE(torch::equal(with_given, model::flatten_state(*model)));
}

TEST(LocalUpdate, SgdStepsWithMomentumAndWeightDecayAsByHand) {
  // Two samples x = e1, e2 with targets 1, 2 and w0 = 0: the mean squared error has gradient
  // g = 2/n X^T (X w - y) = (w - y) = (-1, -2) at w0. Weight decay adds 0.5 w (0 at w0). SGD with
  // lr 0.1: w1 = w0 - 0.1 g = (0.1, 0.2). Step 2: g = (w1 - y) + 0.5 w1 = (-0.85, -1.7); the
  // momentum buffer is 0.9 (-1, -2) + g = (-1.75, -3.5), so w2 = w1 + 0.1 (1.75, 3.5) = (0.275,
  // 0.55).
  auto model = model::make_network(model::Architecture::kLinear, model::NetworkShape{{2}, 0});
  model::load_flat_state(*model, torch::zeros({2}));
  LocalUpdateSettings settings;
  settings.objective = model::Objective::kRegression;
  settings.solver = Solver::kSgd;
  settings.learning_rate = 0.1;
  settings.momentum = 0.9;
  settings.weight_decay = 0.5;
  settings.batch_size = 2;
  settings.max_steps = 2;
  auto generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate);
  local_update(*model, torch::eye(2), torch::tensor({1.0F, 2.0F}), settings, generator);
  EXPECT_TRUE(
      torch::allclose(model::flatten_state(*model), torch::tensor({0.275F, 0.55F}), 0.0, 1e-6))
      << model::flatten_state(*model);
  // FedProx's term (mu/2) ||w - w_start||^2 is the proximal term with one center of weight 1.
  model::load_flat_state(*model, torch::zeros({2}));
  settings.momentum = 0.0;
  settings.weight_decay = 0.0;
  settings.max_steps = 1;
  settings.proximal.mu = 4.0;
  settings.proximal.centers = torch::tensor({{1.0F, 1.0F}});
  settings.proximal.importance = torch::tensor({1.0}, torch::kFloat64);
  // g = (-1, -2) + 4 (w0 - c) = (-5, -6): w1 = (0.5, 0.6).
  local_update(*model, torch::eye(2), torch::tensor({1.0F, 2.0F}), settings, generator);
  EXPECT_TRUE(
      torch::allclose(model::flatten_state(*model), torch::tensor({0.5F, 0.6F}), 0.0, 1e-6));
}

TEST(LocalUpdate, RejectsProximalCentersOfTheWrongShape) {
  auto settings = full_batch_settings();
  settings.proximal.mu = 1.0;
  settings.proximal.centers = torch::zeros({2, kDim});
  settings.proximal.importance = torch::ones({3}, torch::kFloat64);
  EXPECT_THROW(train(regression_data(), settings), ShapeError);
}

}  // namespace
}  // namespace cflrun::local
