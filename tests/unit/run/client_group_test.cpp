#include <cflrun/run/clients/client_group.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/algo/fesem.hpp>
#include <cflrun/algo/flexcfl.hpp>
#include <cflrun/algo/soft_clustering.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/data/linear_regression.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/run/round_services.hpp>

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

/// M = 4 clients of 50 samples each and K = 2 models.
algo::AlgorithmContext four_clients_two_models() {
  algo::AlgorithmContext context;
  context.num_clients = 4;
  context.num_models = 2;
  context.train_samples.assign(4, 50);
  context.seed = 1;
  return context;
}

/// What the clients `ids` answer to `statistic` in round 0 (seed 1), through the run's services.
std::vector<double> answer(algo::ClientStatistic& statistic, ClientGroup& clients, ModelSet& models,
                           const torch::Tensor& initial, const std::vector<int>& ids) {
  RoundServices services(clients, &models, initial, adam());
  return clients.client_statistics(statistic, services, models.states(), ids, /*round=*/0,
                                   /*seed=*/1);
}

/// A plan in which every client trains its own local model.
algo::RoundPlan local_model_plan() {
  algo::RoundPlan plan;
  plan.assignment = {0, 0, 1, 1};
  plan.start.assign(4, algo::kLocalModel);
  return plan;
}

/// One round of local updates; returns every client's trained state, [4, P].
torch::Tensor train_round(ClientGroup& clients, ModelSet& models, const algo::RoundPlan& plan,
                          int round) {
  std::vector<torch::Tensor> results(4);
  std::vector<double> train_loss;
  clients.local_updates(
      plan, models, round, 1, adam(),
      [&](int client, const torch::Tensor& result) {
        results[static_cast<std::size_t>(client)] = result;
      },
      train_loss);
  return torch::stack(results);
}

TEST(ClientGroup, StateRestoresLocalModelsAndAdamMomentsExactly) {
  const auto data = four_clients();
  auto models = two_models();
  const auto initial = models.fresh_state(1, 2);
  ClientGroup original(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  original.hosted().init_local_models(initial);
  original.hosted().keep_optimizers(local::Solver::kAdam);
  train_round(original, models, local_model_plan(), 0);
  train_round(original, models, local_model_plan(), 1);
  const auto state = original.hosted().state();
  EXPECT_EQ(state.at("local_models").sizes(), (std::vector<std::int64_t>{4, kDim}));
  EXPECT_EQ(state.at("adam_step")[0].item<std::int64_t>(), 10);  // 2 rounds x 5 batches

  auto other_models = two_models();
  ClientGroup restored(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  restored.hosted().init_local_models(initial);
  restored.hosted().keep_optimizers(local::Solver::kAdam);
  restored.hosted().restore(state, other_models.working_model(), adam());
  ClientGroup without_moments(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  without_moments.hosted().init_local_models(initial);
  without_moments.hosted().keep_optimizers(local::Solver::kAdam);
  auto third_models = two_models();
  without_moments.hosted().restore(
      {{"local_models", state.at("local_models")},
       {"adam_step", torch::zeros({4}, torch::kInt64)},
       {"adam_exp_avg", torch::zeros_like(state.at("adam_exp_avg"))},
       {"adam_exp_avg_sq", torch::zeros_like(state.at("adam_exp_avg_sq"))}},
      third_models.working_model(), adam());

  const auto next = train_round(original, models, local_model_plan(), 2);
  EXPECT_TRUE(torch::equal(train_round(restored, other_models, local_model_plan(), 2), next));
  EXPECT_FALSE(
      torch::equal(train_round(without_moments, third_models, local_model_plan(), 2), next));
  EXPECT_THROW(restored.hosted().restore({}, other_models.working_model(), adam()), DataError);
}

TEST(ClientGroup, TrainedStatesBecomeLocalModelsAndFesemDistancesMeasureThem) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  const auto distances =
      algo::FeSem(algo::FeSemOptions{}, four_clients_two_models()).client_side().statistic;
  ASSERT_NE(distances, nullptr);
  EXPECT_EQ(distances->length(2, kDim + 1), 2);
  const auto initial = models.fresh_state(1, 2);
  EXPECT_THROW(answer(*distances, clients, models, initial, {0, 1}),
               ConfigError);  // no local models yet
  clients.hosted().init_local_models(initial);
  // Before any training every local model is the initial one: ||w0 - theta_j|| for every client.
  const auto before = answer(*distances, clients, models, initial, {1, 3});
  ASSERT_EQ(before.size(), 4U);
  const auto expected =
      (models.states().to(torch::kFloat64) - initial.to(torch::kFloat64)).norm(2, /*dim=*/1);
  EXPECT_NEAR(before[0], expected[0].item<double>(), 1e-12);
  EXPECT_NEAR(before[3], expected[1].item<double>(), 1e-12);
  // A round trained from server models (FeSEM's M-step) keeps each trained state as the local
  // model.
  algo::RoundPlan plan;
  plan.assignment = plan.start = {0, 1, 0, algo::kNoUpdate};
  std::vector<int> trained;
  std::vector<double> train_loss;
  clients.local_updates(
      plan, models, 0, 1, adam(),
      [&](int client, const torch::Tensor&) { trained.push_back(client); }, train_loss);
  EXPECT_EQ(trained, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(std::isnan(train_loss[3]));
  const auto after = answer(*distances, clients, models, initial, {0, 3});
  EXPECT_NE(after[0], before[0]);
  EXPECT_DOUBLE_EQ(after[2], before[2]);  // client 3 did not train: still the initial model
}

/// FlexCFL's warm-up statistic with `steps` pre-training steps.
std::shared_ptr<algo::ClientStatistic> warm_up(int steps) {
  algo::FlexCflOptions options;
  options.pretrain_steps = steps;
  return algo::FlexCfl(options, four_clients_two_models()).client_side().statistic;
}

TEST(ClientGroup, FlexcflWarmUpUpdatesTakeTheGivenStepsFromTheInitialModel) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  const auto initial = models.fresh_state(1, 2);
  const auto one = answer(*warm_up(1), clients, models, initial, {2});
  const auto seven = answer(*warm_up(7), clients, models, initial, {2});
  ASSERT_EQ(one.size(), static_cast<std::size_t>(kDim));
  EXPECT_EQ(warm_up(7)->length(2, kDim), kDim);
  // One Adam step moves every weight by about the learning rate (Adam's first step is lr * sign).
  for (double value : one) {
    EXPECT_NEAR(std::abs(value), 0.05, 1e-4);
  }
  EXPECT_EQ(answer(*warm_up(7), clients, models, initial, {2}), seven);
  EXPECT_NE(seven, one);
  EXPECT_TRUE(answer(*warm_up(7), clients, models, initial, {}).empty());
  RoundServices without_initial(clients, &models, torch::Tensor(), adam());
  EXPECT_THROW(clients.client_statistics(*warm_up(1), without_initial, models.states(), {2}, 0, 1),
               ConfigError);
}

TEST(ClientGroup, PerSampleLossesServeEveryClientInOneBatchedPass) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  const auto losses = clients.per_sample_losses(models, {1, 3});
  ASSERT_EQ(losses.sizes(),
            (std::vector<std::int64_t>{100, 2}));  // 50 samples each of clients 1 and 3
  // Their client-wise means are the loss vectors the clients answer.
  const auto means =
      torch::stack({losses.narrow(0, 0, 50).mean(0), losses.narrow(0, 50, 50).mean(0)}).flatten();
  const auto loss_vectors = torch::tensor(clients.loss_vectors(models, {1, 3}), torch::kFloat64);
  EXPECT_TRUE(torch::allclose(means, loss_vectors, 1e-12, 1e-12));
  // Without models (the set-up round) the services refuse what needs them.
  RoundServices at_set_up(clients, nullptr, torch::Tensor(), adam());
  EXPECT_THROW(at_set_up.for_each_client(1, false, [](std::size_t, model::Network&) {}),
               ConfigError);
}

/// A client procedure that runs concurrently: the standard update, then the trained state as its
/// report, tagged with the client's id.
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
};

/// A statistic computed concurrently where the run allows: server model 0's parameter sum,
/// tagged with the client's id.
class ConcurrentStatistic : public algo::ClientStatistic {
 public:
  std::int64_t length(int, std::int64_t) const override { return 2; }
  algo::StatisticInput input() const override { return algo::StatisticInput::kNothingNew; }
  std::vector<double> compute(std::vector<algo::LocalClient>& clients,
                              algo::ClientServices& services) override {
    std::vector<double> rows(2 * clients.size());
    services.for_each_client(
        clients.size(), /*concurrent=*/true, [&](std::size_t n, model::Network& model) {
          model::load_flat_state(model, (*clients[n].server_models)[0]);
          rows[2 * n] = model::flatten_state(model).to(torch::kFloat64).sum().item<double>();
          rows[2 * n + 1] = clients[n].id;
        });
    return rows;
  }
};

/// Four clients and two models, the clients set up with `procedure` on `threads` threads.
struct GroupOnThreads {
  GroupOnThreads(int threads, std::shared_ptr<algo::ClientProcedure> procedure)
      : data(four_clients()),
        models(two_models()),
        clients(data, 0, 4, model::Objective::kRegression, torch::kCPU) {
    ExecutionSettings execution;
    execution.threads = threads;
    clients.set_up(std::move(procedure), execution, models.working_model());
  }
  data::ClientData data;
  ModelSet models;
  ClientGroup clients;
};

/// What a group with `threads` training threads, ConcurrentProcedure and ConcurrentStatistic
/// computes in one round: trained states, losses, reports, statistics and scores, flattened into
/// one float64 tensor.
torch::Tensor procedure_round(int threads) {
  GroupOnThreads group(threads, std::make_shared<ConcurrentProcedure>());
  auto& models = group.models;
  auto& clients = group.clients;
  algo::RoundPlan plan;
  plan.assignment = plan.start = {1, 0, algo::kNoUpdate, 1};
  ConcurrentStatistic statistic;
  std::vector<torch::Tensor> parts{
      torch::tensor(answer(statistic, clients, models, torch::Tensor(), {0, 1, 2, 3}))};
  std::vector<double> train_loss;
  clients.local_updates(
      plan, models, 0, 1, adam(),
      [&](int, const torch::Tensor& result) { parts.push_back(result.to(torch::kFloat64)); },
      train_loss);
  parts.push_back(torch::tensor(train_loss).nan_to_num(-1.0));
  for (const auto& [client, report] : clients.take_reports()) {
    parts.push_back(torch::tensor(report));
    EXPECT_EQ(report.back(), client);
  }
  const auto scores = clients.evaluate(plan.assignment, false, models, {}, 0, 1);
  parts.push_back(torch::tensor(scores.test_loss).nan_to_num(-1.0));
  return torch::cat(parts);
}

TEST(ClientGroup, ConcurrentProcedureOnThreadsComputesWhatOneAfterAnotherDoes) {
  const auto one = procedure_round(1);
  const auto three = procedure_round(3);
  EXPECT_EQ(one.numel(), 2 * 4 + 3 * kDim + 4 + 3 * (kDim + 1) + 4);
  EXPECT_TRUE(torch::equal(one, three));  // bit for bit, in client order
}

/// The standard clients' test scores on models 1, 0, none and 1 with `threads` training threads:
/// test losses then accuracies (NaN for the regression and the unassigned client, as -1).
torch::Tensor stacked_scores(int threads) {
  GroupOnThreads group(threads, std::make_shared<algo::StandardClient>());
  const auto scores = group.clients.evaluate({1, 0, -1, 1}, false, group.models, {}, 0, 1);
  return torch::cat({torch::tensor(scores.test_loss), torch::tensor(scores.accuracy)})
      .nan_to_num(-1.0);
}

// The evaluation of the standard clients runs as work items on the executor's threads: the same
// floats as one after another, each client's mean loss on its own model's predictions.
TEST(ClientGroup, StackedEvaluationOnThreadsScoresWhatOneAfterAnotherDoes) {
  const auto one = stacked_scores(1);
  EXPECT_TRUE(torch::equal(one, stacked_scores(2)));
  const auto data = four_clients();
  auto models = two_models();
  auto& model = models.load(1);
  torch::NoGradGuard no_grad;
  const auto test = data.samples(3, /*train=*/false);
  const auto mse =
      (model.forward(test.inputs).flatten() - test.targets.flatten()).pow(2).mean().item<double>();
  EXPECT_NEAR(one[3].item<double>(), mse, 1e-6 * mse);  // client 3 on model 1
  EXPECT_EQ(one[2].item<double>(), -1.0);               // client 2 unassigned
  EXPECT_GT(one[0].item<double>(), 0.0);
}

/// Three rounds of local updates from local models with kept Adam optimizers and proximal terms
/// toward both models; returns the trained states of the last round and the clients' state.
std::pair<torch::Tensor, algo::AlgorithmState> kept_round(int client_batch) {
  const auto data = four_clients();
  auto models = two_models();
  ClientGroup clients(data, 0, 4, model::Objective::kRegression, torch::kCPU);
  clients.hosted().init_local_models(models.fresh_state(1, 2));
  clients.hosted().keep_optimizers(local::Solver::kAdam, 0.9);
  ExecutionSettings execution;
  execution.client_batch = client_batch;
  clients.set_up(std::make_shared<algo::StandardClient>(), execution, models.working_model());
  auto plan = local_model_plan();
  plan.proximal_weights =
      torch::tensor({{1.0, 0.0}, {0.5, 0.5}, {0.0, 1.0}, {0.2, 0.8}}, torch::kFloat64);
  auto settings = adam();
  settings.proximal.mu = 0.5;
  torch::Tensor trained;
  for (int round = 0; round < 3; ++round) {
    plan.start[1] = round == 1 ? algo::kNoUpdate : algo::kLocalModel;  // client 1 skips a round
    std::vector<torch::Tensor> results(4, torch::zeros({kDim}, torch::kFloat64));
    std::vector<double> train_loss;
    clients.local_updates(
        plan, models, round, 1, settings,
        [&](int client, const torch::Tensor& result) {
          results[static_cast<std::size_t>(client)] = result;
        },
        train_loss);
    trained = torch::stack(results);
  }
  return {trained, clients.hosted().state()};
}

// Kept optimizers (moments, step counts, decayed rates: client 1 one update behind) and proximal
// terms client-batched: the states and what a checkpoint keeps equal one client at a time.
TEST(ClientGroup, BatchedKeptOptimizersAndProximalTermsEqualOneAtATime) {
  const auto [one, one_state] = kept_round(1);
  const auto [batched, batched_state] = kept_round(4);
  EXPECT_LT((one - batched).abs().max().item<double>(), 1e-5) << one << batched;
  EXPECT_TRUE(torch::equal(one_state.at("optimizer_updates"), torch::tensor({3, 2, 3, 3})));
  for (const auto* name : {"optimizer_updates", "adam_step"}) {
    EXPECT_TRUE(torch::equal(batched_state.at(name), one_state.at(name))) << name;
  }
  for (const auto* name : {"local_models", "adam_exp_avg", "adam_exp_avg_sq"}) {
    EXPECT_TRUE(torch::allclose(batched_state.at(name), one_state.at(name), 1e-4, 1e-6)) << name;
  }
}

}  // namespace
}  // namespace cflrun::run
