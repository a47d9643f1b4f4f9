#include <cflrun/algo/per_fedavg.hpp>

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

}  // namespace
}  // namespace cflrun::algo
