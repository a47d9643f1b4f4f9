#include <cflrun/run/client_group.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/data/linear_regression.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {
namespace {

constexpr std::int64_t kDim = 5;

data::ClientData four_clients() {
  data::LinearRegressionSpec spec;
  spec.clusters = 2;
  spec.clients_per_cluster = 2;
  spec.train_samples = 50;
  spec.test_samples = 10;
  spec.dimension = kDim;
  return data::linear_regression_data(spec);
}

ModelSet two_models() {
  ModelSet models(2, model::Architecture::kLinear, model::NetworkShape{{kDim}, 0}, torch::kCPU);
  models.initialize(3);
  return models;
}

local::LocalUpdateSettings adam() {
  local::LocalUpdateSettings settings;
  settings.objective = model::Objective::kRegression;
  settings.batch_size = 10;
  settings.learning_rate = 0.05;
  return settings;
}

/// A plan in which every client trains its own local model.
algo::RoundPlan local_model_plan() {
  algo::RoundPlan plan;
  plan.assignment = {0, 0, 1, 1};
  plan.start.assign(4, algo::kLocalModel);
  return plan;
}

/// One round of local updates; returns every client's trained state, [4, P].
torch::Tensor train_round(ClientGroup& clients, ModelSet& models, const algo::RoundPlan& plan, int round) {
  std::vector<torch::Tensor> results(4);
  std::vector<double> train_loss;
  clients.local_updates(plan, models, round, 1, adam(),
                        [&](int client, const torch::Tensor& result) { results[static_cast<std::size_t>(client)] = result; },
                        train_loss);
  return torch::stack(results);
}

TEST(ClientGroup, StateRestoresLocalModelsAndAdamMomentsExactly) {
  const auto data = four_clients();
  auto models = two_models();
  const auto initial = models.fresh_state(1, 2);
  ClientGroup original(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  original.init_local_models(initial, /*keep_optimizers=*/true);
  train_round(original, models, local_model_plan(), 0);
  train_round(original, models, local_model_plan(), 1);
  const auto state = original.state();
  EXPECT_EQ(state.at("local_models").sizes(), (std::vector<std::int64_t>{4, kDim}));
  EXPECT_EQ(state.at("adam_step")[0].item<std::int64_t>(), 10);  // 2 rounds x 5 batches

  auto other_models = two_models();
  ClientGroup restored(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  restored.init_local_models(initial, true);
  restored.restore(state, other_models.working_model(), adam());
  ClientGroup without_moments(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  without_moments.init_local_models(initial, true);
  auto third_models = two_models();
  without_moments.restore({{"local_models", state.at("local_models")},
                           {"adam_step", torch::zeros({4}, torch::kInt64)},
                           {"adam_exp_avg", torch::zeros_like(state.at("adam_exp_avg"))},
                           {"adam_exp_avg_sq", torch::zeros_like(state.at("adam_exp_avg_sq"))}},
                          third_models.working_model(), adam());

  const auto next = train_round(original, models, local_model_plan(), 2);
  EXPECT_TRUE(torch::equal(train_round(restored, other_models, local_model_plan(), 2), next));
  EXPECT_FALSE(torch::equal(train_round(without_moments, third_models, local_model_plan(), 2), next));
  EXPECT_THROW(restored.restore({}, other_models.working_model(), adam()), DataError);
}

TEST(ClientGroup, TrainedStatesBecomeLocalModelsAndDistancesMeasureThem) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  EXPECT_THROW(clients.model_distances(models, {0, 1}), ConfigError);
  const auto initial = models.fresh_state(1, 2);
  clients.init_local_models(initial);
  // Before any training every local model is the initial one: ||w0 - theta_j|| for every client.
  const auto before = clients.model_distances(models, {1, 3});
  ASSERT_EQ(before.size(), 4U);
  const auto expected = (models.states().to(torch::kFloat64) - initial.to(torch::kFloat64)).norm(2, /*dim=*/1);
  EXPECT_NEAR(before[0], expected[0].item<double>(), 1e-12);
  EXPECT_NEAR(before[3], expected[1].item<double>(), 1e-12);
  // A round trained from server models (FeSEM's M-step) keeps each trained state as the local model.
  algo::RoundPlan plan;
  plan.assignment = plan.start = {0, 1, 0, algo::kNoUpdate};
  std::vector<int> trained;
  std::vector<double> train_loss;
  clients.local_updates(plan, models, 0, 1, adam(), [&](int client, const torch::Tensor&) { trained.push_back(client); },
                        train_loss);
  EXPECT_EQ(trained, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(std::isnan(train_loss[3]));
  const auto after = clients.model_distances(models, {0, 3});
  EXPECT_NE(after[0], before[0]);
  EXPECT_DOUBLE_EQ(after[2], before[2]);  // client 3 did not train: still the initial model
}

TEST(ClientGroup, WarmUpUpdatesTakeTheGivenStepsFromTheInitialModel) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  const auto initial = models.fresh_state(1, 2);
  const auto one = clients.warm_up_updates(models.working_model(), initial, 1, 0, 1, adam(), {2});
  const auto seven = clients.warm_up_updates(models.working_model(), initial, 7, 0, 1, adam(), {2});
  ASSERT_EQ(one.size(), static_cast<std::size_t>(kDim));
  // One Adam step moves every weight by about the learning rate (Adam's first step is lr * sign).
  for (double value : one) {
    EXPECT_NEAR(std::abs(value), 0.05, 1e-4);
  }
  EXPECT_EQ(clients.warm_up_updates(models.working_model(), initial, 7, 0, 1, adam(), {2}), seven);
  EXPECT_NE(seven, one);
  EXPECT_TRUE(clients.warm_up_updates(models.working_model(), initial, 7, 0, 1, adam(), {}).empty());
}

}  // namespace
}  // namespace cflrun::run
