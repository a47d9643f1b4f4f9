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

/// A client side that runs concurrently: the standard update, then the trained state as its report
/// and its model's parameter sum as its statistic, each tagged with the client's id.
class ConcurrentProcedure : public algo::ClientProcedure {
 public:
  bool runs_concurrently() const override { return true; }
  std::int64_t report_length() const override { return kDim + 1; }
  std::vector<double> report(algo::LocalClient& client, model::Network& model) override {
    const auto state = model::flatten_state(model).to(torch::kFloat64);
    std::vector<double> row(state.data_ptr<double>(), state.data_ptr<double>() + state.numel());
    row.push_back(client.id);
    return row;
  }
  std::int64_t statistics_length() const override { return 2; }
  std::vector<double> statistics(algo::LocalClient& client, model::Network& model) override {
    return {model::flatten_state(model).to(torch::kFloat64).sum().item<double>(), static_cast<double>(client.id)};
  }
};

/// What a group with `threads` training threads and ConcurrentProcedure computes in one round:
/// trained states, losses, reports, statistics and scores, flattened into one float64 tensor.
torch::Tensor procedure_round(int threads) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  clients.set_procedure(std::make_shared<ConcurrentProcedure>());
  clients.set_training_threads(threads);
  algo::RoundPlan plan;
  plan.assignment = plan.start = {1, 0, algo::kNoUpdate, 1};
  std::vector<torch::Tensor> parts{torch::tensor(clients.client_statistics(models, {0, 1, 2, 3}, 0, 1))};
  std::vector<double> train_loss;
  clients.local_updates(plan, models, 0, 1, adam(),
                        [&](int, const torch::Tensor& result) { parts.push_back(result.to(torch::kFloat64)); },
                        train_loss);
  parts.push_back(torch::tensor(train_loss).nan_to_num(-1.0));
  for (const auto& [client, report] : clients.take_reports()) {
    parts.push_back(torch::tensor(report));
    EXPECT_EQ(report.back(), client);
  }
  const auto scores = clients.evaluate_each(plan.assignment, false, models, {}, 0, 1);
  parts.push_back(torch::tensor(scores.test_loss).nan_to_num(-1.0));
  return torch::cat(parts);
}

TEST(ClientGroup, ConcurrentProcedureOnThreadsComputesWhatOneAfterAnotherDoes) {
  const auto one = procedure_round(1);
  const auto three = procedure_round(3);
  EXPECT_EQ(one.numel(), 2 * 4 + 3 * kDim + 4 + 3 * (kDim + 1) + 4);
  EXPECT_TRUE(torch::equal(one, three));  // bit for bit, in client order
}

}  // namespace
}  // namespace cflrun::run
