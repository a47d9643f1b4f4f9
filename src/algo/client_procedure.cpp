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
  auto clients = batched_clients(batch, core::Purpose::kLocalUpdate);
  if (settings.gradient_averaging) {
    return local::batched_local_gradient(network, batch.train_inputs, batch.train_targets, clients,
                                         settings.batch_size, settings.objective);
  }
  return local::batched_local_update(network, batch.train_inputs, batch.train_targets, clients,
                                     settings);
}

std::vector<local::BatchedClient> batched_clients(const ClientBatch& batch, core::Purpose purpose) {
  std::vector<local::BatchedClient> clients;
  for (std::int64_t c = 0; c < batch.size(); ++c) {
    const auto& client = *batch.clients[static_cast<std::size_t>(c)];
    const auto id = static_cast<std::uint64_t>(client.id);
    const auto round = static_cast<std::uint64_t>(client.round);
    clients.push_back({batch.train_offsets[static_cast<std::size_t>(c)], batch.train_count(c),
                       core::make_torch_generator(client.seed, purpose, id, round),
                       core::dropout_seed(client.seed, purpose, id, round)});
  }
  return clients;
}

}  // namespace cflrun::algo
