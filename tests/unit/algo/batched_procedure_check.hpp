#pragma once
// A client procedure's client-batched form against its one-client form (issue 42): three clients
// of 60, 50 and 40 samples (ragged steps) train, report and are scored both ways, in float64 (where
// float rounding cannot flip a max-pool's choice: tests/unit/local/batched_update_test.cpp), and
// every trained state, loss, report, score, local model and memory must agree within 1e-9.

#include <functional>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/dropout.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::algo::testing {

/// The architecture and data of a check: 3 clients, classification with 10 classes.
struct BatchedCase {
  model::Architecture architecture = model::Architecture::kCnn;
  model::NetworkShape shape{{1, 28, 28}, 10};
  std::vector<std::int64_t> train_counts{60, 50, 40};  ///< non-increasing
  std::vector<std::int64_t> test_counts{20, 30, 10};
};

/// The CIFAR CNN (batch norm, dropout; 4.2 M parameters) on 3 x 32 x 32 samples, with few samples
/// (float64 is slow) of 5, 4 and 3 training and 2, 1 and 2 test samples.
inline BatchedCase cifar_case() {
  BatchedCase c;
  c.architecture = model::Architecture::kCifarCnn;
  c.shape = model::NetworkShape{{3, 32, 32}, 10};
  c.train_counts = {5, 4, 3};
  c.test_counts = {2, 1, 2};
  return c;
}

/// The context of 3 clients of a classifier with 10 classes and d-dimensional features.
inline AlgorithmContext classifier_context(int feature_size) {
  AlgorithmContext context;
  context.num_clients = 3;
  context.num_models = 1;
  context.train_samples.assign(3, 100);
  context.num_classes = 10;
  context.feature_size = feature_size;
  context.classifier_with_head = true;
  return context;
}

/// Global prototypes [10, d] drawn from seed 3, classes 1, 4 and 8 absent.
inline AlgorithmState some_prototypes(std::int64_t feature_size) {
  torch::manual_seed(3);
  return {{"prototypes", torch::randn({10, feature_size}, torch::kFloat64)},
          {"present",
           torch::tensor({1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0}, torch::kFloat64)}};
}

/// The local solver of the checks: SGD with momentum, batches of 16 (ragged over 60, 50, 40).
inline local::LocalUpdateSettings sgd_settings() {
  local::LocalUpdateSettings settings;
  settings.batch_size = 16;
  settings.solver = local::Solver::kSgd;
  settings.learning_rate = 0.05;
  settings.momentum = 0.5;
  return settings;
}

/// A float64 model of the case's architecture (parameters and float buffers).
inline std::shared_ptr<model::Network> float64_model(const BatchedCase& c) {
  auto model = model::make_network(c.architecture, c.shape);
  torch::NoGradGuard no_grad;
  for (auto& parameter : model->parameters()) {
    parameter.set_data(parameter.to(torch::kFloat64));
  }
  for (auto& buffer : model->buffers()) {
    if (buffer.is_floating_point()) {
      buffer.set_data(buffer.to(torch::kFloat64));
    }
  }
  return model;
}

/// The clients' stacked samples and each one's view, memory and local model, as the run keeps them.
struct BatchedClients {
  torch::Tensor train_inputs, train_targets, test_inputs, test_targets;
  std::vector<std::int64_t> train_offsets, test_offsets;
  std::vector<AlgorithmState> memories;     // [g]
  std::vector<torch::Tensor> local_models;  // [g] float64 flat states
  torch::Tensor server_models;              // [1, P] float64
  std::vector<LocalClient> views;

  /// The clients of round `round` (seed 1), ids 0, 1, 2, each with an empty memory and a local
  /// model freshly drawn from seed 200 + id; the server model from seed 300.
  BatchedClients(const BatchedCase& c, int round) {
    torch::manual_seed(7);
    const auto stack = [&](const std::vector<std::int64_t>& counts, torch::Tensor& inputs,
                           torch::Tensor& targets, std::vector<std::int64_t>& offsets) {
      std::int64_t n = 0;
      for (const auto count : counts) {
        offsets.push_back(n);
        n += count;
      }
      std::vector<std::int64_t> shape{n};
      shape.insert(shape.end(), c.shape.sample_shape.begin(), c.shape.sample_shape.end());
      inputs = torch::rand(shape, torch::kFloat64);
      targets = torch::randint(c.shape.num_classes, {n}, torch::kLong);
    };
    stack(c.train_counts, train_inputs, train_targets, train_offsets);
    stack(c.test_counts, test_inputs, test_targets, test_offsets);
    torch::manual_seed(300);
    server_models = model::flatten_state(*float64_model(c), torch::kFloat64).unsqueeze(0);
    for (std::size_t k = 0; k < c.train_counts.size(); ++k) {
      torch::manual_seed(200 + static_cast<int>(k));
      local_models.push_back(model::flatten_state(*float64_model(c), torch::kFloat64));
    }
    memories.resize(c.train_counts.size());
    for (std::size_t k = 0; k < c.train_counts.size(); ++k) {
      LocalClient view;
      view.id = static_cast<int>(k);
      view.round = round;
      view.seed = 1;
      view.train_inputs = train_inputs.narrow(0, train_offsets[k], c.train_counts[k]);
      view.train_targets = train_targets.narrow(0, train_offsets[k], c.train_counts[k]);
      view.test_inputs = test_inputs.narrow(0, test_offsets[k], c.test_counts[k]);
      view.test_targets = test_targets.narrow(0, test_offsets[k], c.test_counts[k]);
      views.push_back(view);
    }
    for (std::size_t k = 0; k < views.size(); ++k) {  // after the vectors stop moving
      views[k].memory = &memories[k];
      views[k].local_model = &local_models[k];
      views[k].server_models = &server_models;
    }
  }
  BatchedClients(const BatchedClients&) = delete;
  BatchedClients& operator=(const BatchedClients&) = delete;

  ClientBatch batch() {
    ClientBatch batch;
    for (auto& view : views) {
      batch.clients.push_back(&view);
    }
    batch.train_inputs = train_inputs;
    batch.train_targets = train_targets;
    batch.train_offsets = train_offsets;
    batch.test_inputs = test_inputs;
    batch.test_targets = test_targets;
    batch.test_offsets = test_offsets;
    return batch;
  }
};

/// Expects two float64 tensors equal within 1e-9 (relative to their scale).
inline void expect_close(const torch::Tensor& batched, const torch::Tensor& one,
                         const std::string& what) {
  ASSERT_EQ(batched.numel(), one.numel()) << what;
  if (one.numel() == 0) {
    return;
  }
  const double scale = std::max(1.0, one.abs().max().item<double>());
  EXPECT_LT((batched.to(torch::kFloat64) - one.to(torch::kFloat64)).abs().max().item<double>(),
            1e-9 * scale)
      << what;
}

/// Expects the clients' memories (and local models) of the two ways equal.
inline void expect_same_memories(const BatchedClients& batched, const BatchedClients& one) {
  for (std::size_t k = 0; k < one.memories.size(); ++k) {
    ASSERT_EQ(batched.memories[k].size(), one.memories[k].size()) << "client " << k;
    for (const auto& [name, tensor] : one.memories[k]) {
      expect_close(batched.memories[k].at(name), tensor,
                   "memory " + name + " of client " + std::to_string(k));
    }
    expect_close(batched.local_models[k], one.local_models[k],
                 "local model of client " + std::to_string(k));
  }
}

/// The states the clients start from: each its local model, or the server model.
inline std::vector<torch::Tensor> starts(const BatchedClients& clients, bool local_models) {
  std::vector<torch::Tensor> states;
  for (std::size_t k = 0; k < clients.views.size(); ++k) {
    states.push_back(local_models ? clients.local_models[k] : clients.server_models[0]);
  }
  return states;
}

/// train() (then report()) of every client one at a time against train_batched() (then
/// report_batched()), from each client's local model or the server model; then `evaluations`
/// times evaluate() against evaluate_batched() on the trained states (the later ones see what the
/// earlier ones kept). `prepare` may change both ways' clients first. Returns the batched losses.
inline std::vector<double> expect_batched_equals_one_at_a_time(
    ClientProcedure& procedure, const BatchedCase& c, const local::LocalUpdateSettings& settings,
    const AlgorithmState& payload, bool from_local_models, int evaluations = 1,
    const std::function<void(BatchedClients&)>& prepare = {}) {
  EXPECT_EQ(procedure.not_batched(), "");
  const int round = 1;
  BatchedClients one(c, round);
  BatchedClients batched(c, round);
  if (prepare) {
    prepare(one);
    prepare(batched);
  }
  const auto g = static_cast<std::int64_t>(one.views.size());
  // One at a time, as the run's per-client rule does it.
  auto model = float64_model(c);
  std::vector<torch::Tensor> trained;
  std::vector<double> losses;
  std::vector<std::vector<double>> reports;
  for (std::int64_t k = 0; k < g; ++k) {
    auto& view = one.views[static_cast<std::size_t>(k)];
    model::load_flat_state(*model, starts(one, from_local_models)[static_cast<std::size_t>(k)]);
    model->train();
    model::set_dropout_generator(
        *model, model::dropout_generator(
                    core::dropout_seed(1, core::Purpose::kLocalUpdate, k, round), torch::kCPU));
    losses.push_back(procedure.train(view, *model, settings, payload));
    reports.push_back(procedure.report(view, *model));
    trained.push_back(model::flatten_state(*model, torch::kFloat64));
  }
  // Client-batched.
  model::ClientBatchedNetwork network(*float64_model(c), static_cast<int>(g), torch::kCPU);
  network.load(torch::stack(starts(batched, from_local_models)));
  auto batch = batched.batch();
  const auto batched_losses = procedure.train_batched(batch, network, settings, payload);
  const auto batched_reports = procedure.report_batched(batch, network);
  const auto batched_trained = network.states(static_cast<int>(g));
  for (std::int64_t k = 0; k < g; ++k) {
    const auto at = static_cast<std::size_t>(k);
    const auto name = "client " + std::to_string(k);
    expect_close(batched_trained[k], trained[at], "trained state of " + name);
    EXPECT_GT((trained[at] - starts(one, from_local_models)[at]).abs().max().item<double>(), 1e-6)
        << name << " did not train";
    EXPECT_NEAR(batched_losses[at], losses[at], 1e-9 * std::max(1.0, std::abs(losses[at]))) << name;
    expect_close(torch::tensor(batched_reports[at], torch::kFloat64),
                 torch::tensor(reports[at], torch::kFloat64), "report of " + name);
  }
  expect_same_memories(batched, one);
  // Scores after "aggregation": each client on its trained state.
  for (int evaluation = 0; evaluation < evaluations; ++evaluation) {
    std::vector<ClientScore> scores;
    for (std::int64_t k = 0; k < g; ++k) {
      model::load_flat_state(*model, trained[static_cast<std::size_t>(k)]);
      model->train();
      model::set_dropout_generator(
          *model, model::dropout_generator(
                      core::dropout_seed(1, core::Purpose::kFineTune, k, round), torch::kCPU));
      scores.push_back(procedure.evaluate(one.views[static_cast<std::size_t>(k)], *model, payload));
    }
    network.load(batched_trained);
    const auto batched_scores = procedure.evaluate_batched(batch, network, payload);
    for (std::size_t k = 0; k < scores.size(); ++k) {
      EXPECT_NEAR(batched_scores[k].accuracy, scores[k].accuracy, 1e-12)
          << "client " << k << ", evaluation " << evaluation;
      EXPECT_NEAR(batched_scores[k].loss, scores[k].loss, 1e-9 * std::max(1.0, scores[k].loss))
          << "client " << k << ", evaluation " << evaluation;
    }
    expect_same_memories(batched, one);
  }
  return batched_losses;
}

}  // namespace cflrun::algo::testing
