// Optimizers kept across a client's local updates with a per-update learning-rate decay: the CFL
// notebook's solver (--cfl-solver notebook; cfl-flexcfl-fesem-setup.md Sec. 1), by hand.
#include <cflrun/run/clients/client_group.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/algo/cfl.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

/// One client with n = 2 samples in d = 2: X = [[1, 0], [0, 2]], y = [1, 1]. For the linear model
/// f(x) = w.x (no bias) the mean squared error has the gradient g(w) = 2/n X^T (X w - y) =
/// X^T (X w - y).
data::ClientData one_client() {
  data::ClientData data;
  data.sample_shape = {2};
  data.num_classes = 0;
  data.true_clusters = {0};
  data.samples = [](int /*client*/, bool /*train*/) {
    return data::ClientSamples{torch::tensor({{1.0F, 0.0F}, {0.0F, 2.0F}}),
                               torch::tensor({1.0F, 1.0F})};
  };
  return data;
}

/// The notebook's solver: SGD lr 0.1, momentum 0.9, no weight decay; one full batch, so that one
/// local update is one step.
local::LocalUpdateSettings notebook_sgd() {
  local::LocalUpdateSettings settings;
  settings.objective = model::Objective::kRegression;
  settings.batch_size = 2;
  settings.learning_rate = 0.1;
  settings.solver = local::Solver::kSgd;
  settings.momentum = 0.9;
  return settings;
}

/// A client group of one_client() whose optimizer is kept, with the notebook's decay.
ClientGroup notebook_client(const data::ClientData& data) {
  ClientGroup clients(data, 0, 1, model::Objective::kRegression, torch::kCPU);
  clients.hosted().keep_optimizers(local::Solver::kSgd, algo::Cfl::kNotebookLrDecay);
  return clients;
}

/// A server with one model, w = 0.
ModelSet one_model() {
  ModelSet models(1, model::Architecture::kLinear, model::NetworkShape{{2}, 0}, torch::kCPU);
  models.states().zero_();
  return models;
}

/// The client's local update from the server model (as a CFL round plans it); the server model
/// then becomes its trained state (the average of a cluster of one). Returns that state, [2].
torch::Tensor train_round(ClientGroup& clients, ModelSet& models, int round) {
  algo::RoundPlan plan;
  plan.assignment = {0};
  plan.start = {0};
  torch::Tensor trained;
  std::vector<double> train_loss;
  clients.local_updates(
      plan, models, round, /*seed=*/1, notebook_sgd(),
      [&](int /*client*/, const torch::Tensor& result) { trained = result.to(torch::kFloat32); },
      train_loss);
  models.states()[0].copy_(trained);
  return trained;
}

// By hand, torch's SGD convention (dampening 0: v = m v + g, w -= lr_r v), lr_r = 0.1 * 0.99^r:
//   update 1: g1 = X^T (X 0 - y) = (-1, -2); v1 = g1; lr_1 = 0.099;
//             w1 = 0 - 0.099 (-1, -2) = (0.099, 0.198).
//   update 2: X w1 - y = (-0.901, -0.604); g2 = (-0.901, -1.208);
//             v2 = 0.9 (-1, -2) + g2 = (-1.801, -3.008); lr_2 = 0.09801;
//             w2 = w1 - 0.09801 v2 = (0.27551601, 0.49281408).
// A fresh optimizer per update (v2 = g2) would give (0.18730701, 0.31639608); no decay (lr 0.1)
// w1 = (0.1, 0.2).
TEST(KeptOptimizers, NotebookSolverKeepsSgdMomentumAndDecaysTheRateByHand) {
  const auto data = one_client();
  auto clients = notebook_client(data);
  auto models = one_model();
  const auto w1 = train_round(clients, models, 0);
  EXPECT_TRUE(torch::allclose(w1, torch::tensor({0.099F, 0.198F}), 0.0, 1e-7)) << w1;
  const auto w2 = train_round(clients, models, 1);
  EXPECT_TRUE(torch::allclose(w2, torch::tensor({0.27551601F, 0.49281408F}), 0.0, 1e-6)) << w2;
  const auto state = clients.hosted().state();
  EXPECT_EQ(state.at("optimizer_updates")[0].item<std::int64_t>(), 2);
  EXPECT_TRUE(torch::allclose(state.at("sgd_momentum_buffer"), torch::tensor({{-1.801F, -3.008F}}),
                              0.0, 1e-6))
      << state.at("sgd_momentum_buffer");
  EXPECT_EQ(state.count("adam_step"), 0U);
}

TEST(KeptOptimizers, SgdStateRestoresMomentumAndUpdateCountsBitForBit) {
  const auto data = one_client();
  auto original = notebook_client(data);
  auto models = one_model();
  train_round(original, models, 0);
  const auto state = original.hosted().state();
  const auto after_one = models.states().clone();
  const auto next = train_round(original, models, 1);

  // A resumed client: a fresh group, the server model of round 1 and the checkpointed state.
  const auto resumed = [&](const algo::AlgorithmState& checkpoint) {
    auto clients = notebook_client(data);
    auto server = one_model();
    server.states().copy_(after_one);
    clients.hosted().restore(checkpoint, server.working_model(), notebook_sgd());
    return train_round(clients, server, 1);
  };
  EXPECT_TRUE(torch::equal(resumed(state), next));
  // Each part of the state matters: with the momentum buffer zeroed, or another count (update 2
  // would step with lr * 0.99^6), the resumed update differs.
  auto no_buffer = state;
  no_buffer["sgd_momentum_buffer"] = torch::zeros({1, 2});
  EXPECT_FALSE(torch::allclose(resumed(no_buffer), next, 0.0, 1e-5));
  auto other_count = state;
  other_count["optimizer_updates"] = torch::full({1}, 5, torch::kInt64);
  EXPECT_FALSE(torch::allclose(resumed(other_count), next, 0.0, 1e-5));
  auto missing = state;
  missing.erase("optimizer_updates");
  EXPECT_THROW(resumed(missing), DataError);
}

TEST(KeptOptimizers, RefusesAnUpdateOfAnotherSolverAndANonPositiveDecay) {
  const auto data = one_client();
  auto clients = notebook_client(data);
  auto models = one_model();
  algo::RoundPlan plan;
  plan.assignment = {0};
  plan.start = {0};
  auto adam = notebook_sgd();
  adam.solver = local::Solver::kAdam;
  adam.momentum = 0.0;
  std::vector<double> loss;
  EXPECT_THROW(clients.local_updates(
                   plan, models, 0, 1, adam, [](int, const torch::Tensor&) {}, loss),
               ConfigError);
  EXPECT_THROW(clients.hosted().keep_optimizers(local::Solver::kSgd, 0.0), ConfigError);
}

}  // namespace
}  // namespace cflrun::run
