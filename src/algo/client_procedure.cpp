#include <cflrun/algo/client_procedure.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

std::int64_t ClientBatch::train_count(std::int64_t c) const {
  return clients.at(static_cast<std::size_t>(c))->train_inputs.size(0);
}

std::int64_t ClientBatch::test_count(std::int64_t c) const {
  return clients.at(static_cast<std::size_t>(c))->test_inputs.size(0);
}

double ClientProcedure::train(LocalClient& client, model::Network& model,
                              const local::LocalUpdateSettings& settings,
                              const AlgorithmState& /*payload*/) {
  auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                              static_cast<std::uint64_t>(client.id),
                                              static_cast<std::uint64_t>(client.round));
  return local::local_update(model, client.train_inputs, client.train_targets, settings, generator);
}

std::vector<double> ClientProcedure::report(LocalClient& /*client*/, model::Network& /*model*/) {
  return {};
}

ClientScore ClientProcedure::evaluate(LocalClient& client, model::Network& model,
                                      const AlgorithmState& /*payload*/) {
  return local::score(model, client.objective, client.test_inputs, client.test_targets);
}

std::vector<double> ClientProcedure::train_batched(ClientBatch& /*batch*/,
                                                   model::ClientBatchedNetwork& /*network*/,
                                                   const local::LocalUpdateSettings& /*settings*/,
                                                   const AlgorithmState& /*payload*/) {
  throw ConfigError("this algorithm's clients cannot train client-batched: " + not_batched() +
                    " (use --client-batch 1)");
}

std::vector<std::vector<double>> ClientProcedure::report_batched(
    ClientBatch& batch, model::ClientBatchedNetwork& /*network*/) {
  return std::vector<std::vector<double>>(batch.clients.size());
}

std::vector<ClientScore> ClientProcedure::evaluate_batched(ClientBatch& batch,
                                                           model::ClientBatchedNetwork& network,
                                                           const AlgorithmState& /*payload*/) {
  std::vector<std::int64_t> counts;
  for (std::int64_t c = 0; c < batch.size(); ++c) {
    counts.push_back(batch.test_count(c));
  }
  return local::batched_scores(network, batch.clients.front()->objective, batch.test_inputs,
                               batch.test_targets, batch.test_offsets, counts);
}

double StandardClient::train(LocalClient& client, model::Network& model,
                             const local::LocalUpdateSettings& settings,
                             const AlgorithmState& payload) {
  if (settings.gradient_averaging) {
    return local::local_gradient(model, client.train_inputs, client.train_targets,
                                 settings.batch_size, settings.objective);
  }
  return ClientProcedure::train(client, model, settings, payload);
}

std::vector<double> StandardClient::train_batched(ClientBatch& batch,
                                                  model::ClientBatchedNetwork& network,
                                                  const local::LocalUpdateSettings& settings,
                                                  const AlgorithmState& /*payload*/) {
  return standard_train_batched(batch, network, settings);
}

std::vector<double> standard_train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                           const local::LocalUpdateSettings& settings,
                                           core::Purpose purpose) {
  auto clients = batched_clients(batch, purpose);
  for (std::size_t c = 0; c < clients.size(); ++c) {
    if (!batch.proximal_importance.empty()) {
      clients[c].proximal_importance = batch.proximal_importance[c];
    }
    if (!batch.kept_optimizers.empty()) {
      clients[c].kept = &batch.kept_optimizers[c];
    }
  }
  if (settings.gradient_averaging) {
    return local::batched_local_gradient(network, batch.train_inputs, batch.train_targets, clients,
                                         settings.batch_size, settings.objective);
  }
  return local::batched_local_update(network, batch.train_inputs, batch.train_targets, clients,
                                     settings);
}

std::vector<local::BatchedClient> batched_clients(const ClientBatch& batch, core::Purpose purpose) {
  std::vector<local::BatchedClient> clients;
  const auto seeds = dropout_seeds(batch, purpose);
  for (std::int64_t c = 0; c < batch.size(); ++c) {
    const auto& client = *batch.clients[static_cast<std::size_t>(c)];
    const auto id = static_cast<std::uint64_t>(client.id);
    const auto round = static_cast<std::uint64_t>(client.round);
    local::BatchedClient batched;
    batched.offset = batch.train_offsets[static_cast<std::size_t>(c)];
    batched.count = batch.train_count(c);
    batched.max_steps = client.max_steps;
    batched.generator = core::make_torch_generator(client.seed, purpose, id, round);
    batched.dropout_seed = seeds[static_cast<std::size_t>(c)];
    clients.push_back(std::move(batched));
  }
  return clients;
}

local::ClientPasses local_update_passes(const ClientBatch& batch,
                                        const local::LocalUpdateSettings& settings,
                                        std::vector<std::size_t>& last_epoch) {
  local::ClientPasses passes;
  for (auto& client : batched_clients(batch, core::Purpose::kLocalUpdate)) {
    std::vector<std::size_t> epochs;
    passes.push_back(local::shuffled_batches(
        client.offset, client.count, settings.batch_size,
        local::local_steps(client.count, settings, client.max_steps), client.generator, epochs));
    last_epoch.push_back(epochs.back());
  }
  return passes;
}

local::ClientSchedule training_schedule(const ClientBatch& batch,
                                        const model::ClientBatchedNetwork& network,
                                        const local::ClientPasses& passes, core::Purpose purpose) {
  return {passes,
          local::draw_dropout_masks(network, passes, dropout_seeds(batch, purpose),
                                    batch.train_inputs.device()),
          network, batch.train_inputs, batch.train_targets};
}

std::vector<std::size_t> pass_counts(const local::ClientPasses& passes) {
  std::vector<std::size_t> counts;
  for (const auto& client : passes) {
    counts.push_back(client.size());
  }
  return counts;
}

std::vector<std::uint64_t> dropout_seeds(const ClientBatch& batch, core::Purpose purpose) {
  std::vector<std::uint64_t> seeds;
  for (const auto* client : batch.clients) {
    seeds.push_back(core::dropout_seed(client->seed, purpose,
                                       static_cast<std::uint64_t>(client->id),
                                       static_cast<std::uint64_t>(client->round)));
  }
  return seeds;
}

void descend(model::ClientBatchedNetwork& network, std::int64_t g, double step) {
  torch::NoGradGuard no_grad;
  for (const auto& parameter : network.parameters()) {
    if (parameter.grad().defined()) {
      parameter.narrow(0, 0, g).add_(parameter.grad().narrow(0, 0, g), -step);
    }
  }
}

}  // namespace cflrun::algo
