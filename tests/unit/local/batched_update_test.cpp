// Client-batched local updates (issue 23) against local_update / local_gradient one client at a
// time.
#include <cflrun/local/batched_update.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::local {
namespace {

using model::Architecture;

struct Case {
  Architecture architecture;
  model::NetworkShape shape;
  model::Objective objective;
  /// Samples per client and batch size divided by this (the CIFAR CNN's 4.2 M parameters).
  std::int64_t scale_down = 1;
};

/// Three clients of 130, 100 and 45 samples: with batches of 50 their epochs take 3, 2 and 1 steps,
/// with short last batches, so the batched steps are ragged in both clients and rows (scaled
/// down by 10: 13, 10 and 4 samples in batches of 5, ragged alike).
std::vector<std::int64_t> counts(const Case& c) {
  return {130 / c.scale_down, 100 / c.scale_down, 45 / c.scale_down};
}

std::vector<Case> cases() {
  using model::Objective;
  return {{Architecture::kCnn, {{1, 28, 28}, 10}, Objective::kClassification},
          {Architecture::kMlp, {{1, 8, 8}, 10}, Objective::kClassification},
          {Architecture::kLinear, {{20}, 0}, Objective::kRegression},
          {Architecture::kAutoencoder, {{1, 8, 8}, 0}, Objective::kReconstruction},
          {Architecture::kConvAutoencoder, {{3, 32, 32}, 0}, Objective::kReconstruction},
          {Architecture::kCifarCnn, {{3, 32, 32}, 10}, Objective::kClassification, 10},
          {Architecture::kFedAvgCnn, {{1, 28, 28}, 10}, Objective::kClassification}};
}

struct Data {
  torch::Tensor inputs;   // [n, ...sample shape]
  torch::Tensor targets;  // [n]
};

Data data_for(const Case& c) {
  torch::manual_seed(7);
  std::int64_t n = 0;
  for (const auto count : counts(c)) {
    n += count;
  }
  std::vector<std::int64_t> shape{n};
  shape.insert(shape.end(), c.shape.sample_shape.begin(), c.shape.sample_shape.end());
  const auto inputs = torch::rand(shape);
  const auto targets = c.objective == model::Objective::kClassification
                           ? torch::randint(10, {n}, torch::kLong)
                           : torch::randn({n});
  return {inputs, targets};
}

/// Client k's start state: a fresh model drawn from seed 100 + k.
torch::Tensor start_state(const Case& c, int k) {
  torch::manual_seed(100 + k);
  return model::flatten_state(*model::make_network(c.architecture, c.shape));
}

std::vector<BatchedClient> batched_clients(const Case& c) {
  std::vector<BatchedClient> clients;
  std::int64_t offset = 0;
  const auto sizes = counts(c);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    clients.push_back({offset, sizes[k],
                       core::make_torch_generator(1, core::Purpose::kLocalUpdate, k),
                       core::dropout_seed(1, core::Purpose::kLocalUpdate, k)});
    offset += sizes[k];
  }
  return clients;
}

/// The clients' start states and a client-batched network (of `capacity`) holding them.
struct Loaded {
  std::vector<torch::Tensor> starts;  // [3] flat states
  model::ClientBatchedNetwork network;
};

Loaded loaded(const Case& c, int capacity) {
  std::vector<torch::Tensor> starts;
  for (int k = 0; k < 3; ++k) {
    starts.push_back(start_state(c, k));
  }
  Loaded result{starts, model::ClientBatchedNetwork(*model::make_network(c.architecture, c.shape),
                                                    capacity, torch::kCPU)};
  result.network.load(torch::stack(starts));
  return result;
}

/// A model of the case's architecture holding `state`, to train one client at a time.
std::shared_ptr<model::Network> one_client(const Case& c, const torch::Tensor& state) {
  auto model = model::make_network(c.architecture, c.shape);
  model::load_flat_state(*model, state);
  return model;
}

LocalUpdateSettings settings_for(const Case& c) {
  LocalUpdateSettings settings;
  settings.objective = c.objective;
  settings.batch_size = static_cast<int>(50 / c.scale_down);
  settings.local_epochs = 2;
  settings.learning_rate = c.scale_down > 1 ? 0.001 : 0.01;
  return settings;
}

/// One model per client holding its start state.
std::vector<std::shared_ptr<model::Network>> one_client_models(
    const Case& c, const std::vector<torch::Tensor>& starts) {
  std::vector<std::shared_ptr<model::Network>> models;
  for (const auto& start : starts) {
    models.push_back(one_client(c, start));
  }
  return models;
}

/// Trains every client one at a time and client-batched; expects equal states and losses.
void expect_batched_equals_one_at_a_time(const Case& c, const LocalUpdateSettings& settings) {
  const auto data = data_for(c);
  auto [starts, network] = loaded(c, 4);
  auto clients = batched_clients(c);
  const auto losses = batched_local_update(network, data.inputs, data.targets, clients, settings);
  const auto trained = network.states(3);
  const auto models = one_client_models(c, starts);
  for (int k = 0; k < 3; ++k) {
    const auto& model = models[static_cast<std::size_t>(k)];
    auto generator =
        core::make_torch_generator(1, core::Purpose::kLocalUpdate, static_cast<std::uint64_t>(k));
    const auto& client = clients[static_cast<std::size_t>(k)];
    torch::manual_seed(client.dropout_seed);  // as ClientGroup::train_client seeds it
    const double loss =
        local_update(*model, data.inputs.narrow(0, client.offset, client.count),
                     data.targets.narrow(0, client.offset, client.count), settings, generator);
    const auto expected = model::flatten_state(*model);
    // Adam divides by the gradient's running RMS, so the float rounding of a near-zero gradient
    // moves a weight by up to a fraction of the step size (lr 0.01): measured at most 6e-5. Not
    // so for the CIFAR CNN's: its batch norms make the convolutions' bias gradients zero in
    // exact arithmetic, and rounding decides the sign of every such Adam step (up to lr a step;
    // SGD compares its states below). Its losses agree all the same. FedAvgCNN's 582 026 weights
    // hold more such near-zero gradients (its 512 hidden units feed dead ReLUs): measured 4.8e-4
    // under Adam, so it gets a tenth of the step size; under SGD the common bound.
    const double tolerance =
        c.architecture == Architecture::kFedAvgCnn && settings.solver == Solver::kAdam ? 1e-3
                                                                                       : 2e-4;
    if (c.architecture != Architecture::kCifarCnn || settings.solver == Solver::kSgd) {
      EXPECT_LT((trained[k] - expected).abs().max().item<double>(), tolerance)
          << model::architecture_name(c.architecture) << " client " << k;
    }
    EXPECT_NEAR(losses[static_cast<std::size_t>(k)], loss, 1e-5 * std::max(1.0, std::abs(loss)))
        << model::architecture_name(c.architecture) << " client " << k;
    EXPECT_GT((expected - starts[static_cast<std::size_t>(k)]).abs().max().item<double>(),
              1e-4);  // it trained
  }
}

TEST(BatchedLocalUpdate, EqualsOneClientAtATimeWithAdamForEveryArchitecture) {
  for (const auto& c : cases()) {
    expect_batched_equals_one_at_a_time(c, settings_for(c));
  }
}

TEST(BatchedLocalUpdate, EqualsOneClientAtATimeWithSgdMomentumAndWeightDecay) {
  for (const auto& c : {cases()[0], cases()[1], cases()[5]}) {
    auto settings = settings_for(c);
    settings.solver = Solver::kSgd;
    settings.momentum = 0.9;
    settings.weight_decay = 1e-3;
    settings.learning_rate = 0.05;
    expect_batched_equals_one_at_a_time(c, settings);
  }
}

TEST(BatchedLocalUpdate, EqualsOneClientAtATimeWithMaxSteps) {
  auto settings = settings_for(cases()[1]);
  settings.max_steps = 4;  // 4 steps each: the 45-sample client reshuffles at every step
  expect_batched_equals_one_at_a_time(cases()[1], settings);
}

TEST(BatchedLocalGradient, EqualsLocalGradientOfEveryClient) {
  for (const auto& c : {cases()[1], cases()[5]}) {  // the MLP; the CIFAR CNN (batch norm, dropout)
    const auto data = data_for(c);
    auto [starts, network] = loaded(c, 3);
    const auto clients = batched_clients(c);
    const auto batch_size = static_cast<int>(50 / c.scale_down);
    const auto losses = batched_local_gradient(network, data.inputs, data.targets, clients,
                                               batch_size, c.objective);
    const auto gradients = network.gradients(3);
    const auto models = one_client_models(c, starts);
    for (int k = 0; k < 3; ++k) {
      const auto& model = models[static_cast<std::size_t>(k)];
      const auto& client = clients[static_cast<std::size_t>(k)];
      torch::manual_seed(client.dropout_seed);
      const double loss = local_gradient(*model, data.inputs.narrow(0, client.offset, client.count),
                                         data.targets.narrow(0, client.offset, client.count),
                                         batch_size, c.objective);
      EXPECT_LT((gradients[k] - model::flatten_gradients(*model)).abs().max().item<double>(),
                c.scale_down > 1 ? 1e-5 : 1e-6)
          << model::architecture_name(c.architecture) << " client " << k;
      EXPECT_NEAR(losses[static_cast<std::size_t>(k)], loss, 1e-6 * std::max(1.0, std::abs(loss)))
          << model::architecture_name(c.architecture) << k;
    }
  }
}

// A client's dropout masks come from its own dropout seed: trained alone it ends where it ends
// beside the two clients that draw before it (with masks drawn one after another from one
// generator, alone it would get the first client's masks and end elsewhere).
TEST(BatchedLocalUpdate, DropoutMasksDoNotDependOnTheOtherClients) {
  const auto c = cases()[5];  // the CIFAR CNN: dropout in its fully connected layers
  auto settings = settings_for(c);
  settings.solver = Solver::kSgd;  // its Adam steps' signs are float rounding (see above)
  const auto data = data_for(c);
  auto [starts, all] = loaded(c, 3);
  auto clients = batched_clients(c);
  batched_local_update(all, data.inputs, data.targets, clients, settings);
  model::ClientBatchedNetwork alone(*model::make_network(c.architecture, c.shape), 1, torch::kCPU);
  alone.load(starts[2].unsqueeze(0));
  std::vector<BatchedClient> last{clients[2]};
  last[0].generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate, 2);
  last[0].offset = 0;
  batched_local_update(alone, data.inputs.narrow(0, clients[2].offset, clients[2].count),
                       data.targets.narrow(0, clients[2].offset, clients[2].count), last, settings);
  EXPECT_LT((alone.states(1)[0] - all.states(3)[2]).abs().max().item<double>(), 2e-4);
  last[0].dropout_seed = clients[0].dropout_seed;  // the first client's masks: another result
  last[0].generator = core::make_torch_generator(1, core::Purpose::kLocalUpdate, 2);
  alone.load(starts[2].unsqueeze(0));
  batched_local_update(alone, data.inputs.narrow(0, clients[2].offset, clients[2].count),
                       data.targets.narrow(0, clients[2].offset, clients[2].count), last, settings);
  EXPECT_GT((alone.states(1)[0] - all.states(3)[2]).abs().max().item<double>(), 1e-3);
}

TEST(BatchedLocalUpdate, RejectsClientsInIncreasingOrderOfSteps) {
  const auto c = cases()[1];
  const auto data = data_for(c);
  auto network = loaded(c, 3).network;
  auto clients = batched_clients(c);
  std::swap(clients[0], clients[2]);
  EXPECT_THROW(batched_local_update(network, data.inputs, data.targets, clients, settings_for(c)),
               ShapeError);
}

TEST(BatchedLocalUpdate, RejectsAProximalTerm) {
  const auto c = cases()[1];
  const auto data = data_for(c);
  auto network = loaded(c, 3).network;
  auto clients = batched_clients(c);
  auto settings = settings_for(c);
  settings.proximal.mu = 0.1;
  EXPECT_THROW(batched_local_update(network, data.inputs, data.targets, clients, settings),
               ConfigError);
}

}  // namespace
}  // namespace cflrun::local
