#include <cflrun/algo/per_fedavg.hpp>

#include "batched_procedure_check.hpp"
#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::algo {
namespace {

TEST(PerFedAvg, MetaStepIsTheHandComputedTwoStepGradient) {
  // f(w; x, y) = (x.w - y)^2 with w0 = 0. First batch x = (1, 0), y = 1: grad = 2 x (x.w0 - y) =
  // (-2, 0), so w~ = w0 - 0.1 (-2, 0) = (0.2, 0). Second batch x = (1, 1), y = 2 at w~: residual
  // 0.2 - 2 = -1.8, grad = (-3.6, -3.6). The meta step moves the start point: w = w0 - 0.5 grad =
  // (1.8, 1.8). The returned loss is f(w0; first batch) = 1.
  auto model = model::make_network(model::Architecture::kLinear, model::NetworkShape{{2}, 0});
  model::load_flat_state(*model, torch::zeros({2}));
  const double loss = meta_step(*model, model::Objective::kRegression,
                                torch::tensor({{1.0F, 0.0F}}), torch::tensor({1.0F}),
                                torch::tensor({{1.0F, 1.0F}}), torch::tensor({2.0F}), 0.1, 0.5);
  EXPECT_DOUBLE_EQ(loss, 1.0);
  EXPECT_TRUE(torch::allclose(model::flatten_state(*model), torch::tensor({1.8F, 1.8F}), 0.0, 1e-6))
      << model::flatten_state(*model);
}

TEST(PerFedAvg, IsFedAvgOnTheServerWithItsOwnClientSide) {
  PerFedAvg perfedavg(PerFedAvgOptions{}, testing::context_for(4, 1));
  EXPECT_EQ(perfedavg.num_models(), 1);
  EXPECT_FALSE(perfedavg.traits().clusters_clients);
  ASSERT_NE(perfedavg.client_side().procedure, nullptr);
  const auto plan = perfedavg.plan(testing::input_for(0, {0, 2, 3}));
  EXPECT_EQ(plan.start, (std::vector<int>{0, -1, 0, 0}));
  EXPECT_DOUBLE_EQ(plan.weights.sum().item<double>(), 300.0);
  auto context = testing::context_for(4, 1);
  context.gradient_averaging = true;
  EXPECT_THROW(
      check_run_options("perfedavg", PerFedAvg(PerFedAvgOptions{}, context).traits(), context),
      ConfigError);
}

// The client-batched meta-steps and fine-tuning step compute what one client at a time does: the
// CNN, and the CIFAR CNN (batch norm, dropout) scaled down.
TEST(PerFedAvg, BatchedClientsEqualOneAtATime) {
  const testing::BatchedCase cnn;  // the CNN, 60, 50 and 40 samples
  PerFedAvgOptions options;
  options.alpha = 0.05;
  options.beta = 0.02;
  const auto procedure = PerFedAvg(options, testing::context_for(3, 1)).client_side().procedure;
  local::LocalUpdateSettings settings;
  settings.batch_size = 10;  // meta-batches of 20: 3, 2 and 2 meta-steps per pass
  settings.local_epochs = 1;
  const auto losses =
      testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings, {}, false);
  EXPECT_GT(losses[0], 0.0);
  settings.batch_size = 1;  // meta-batches of 2: 2, 2 and 1 meta-steps per pass
  testing::expect_batched_equals_one_at_a_time(*procedure, testing::cifar_case(), settings, {},
                                               false);
}

}  // namespace
}  // namespace cflrun::algo
