// The hosted clients' samples, local models, views and streams (include/cflrun/run/clients/
// hosted_clients.hpp); their checkpointed state is in hosted_clients_state.cpp.
#include <cflrun/run/clients/hosted_clients.hpp>

#include <string>

#include <cflrun/core/error.hpp>
#include <cflrun/model/dropout.hpp>

namespace cflrun::run {

HostedClients::HostedClients(const data::ClientData& data, int first, int end,
                             model::Objective objective, torch::Device device)
    : first_(first),
      objective_(objective),
      device_(device),
      train_(data, first, end, /*train=*/true, device),
      test_(data, first, end, /*train=*/false, device),
      memories_(static_cast<std::size_t>(end - first)),
      local_views_(static_cast<std::size_t>(end - first)) {}

void HostedClients::move_samples(const data::ClientData& data, const std::vector<int>& clusters) {
  if (!data.samples_in) {
    throw ConfigError(
        "this data cannot move clients between clusters (synthetic data and mixture "
        "partitions have no cluster pools); remove --changes");
  }
  auto moved = data;
  moved.samples = [&data, &clusters](int client, bool train) {
    return data.samples_in(client, clusters.at(static_cast<std::size_t>(client)), train);
  };
  const int end = first_ + size();
  train_ = StackedSamples(moved, first_, end, /*train=*/true, device_);
  test_ = StackedSamples(moved, first_, end, /*train=*/false, device_);
}

std::vector<std::int64_t> HostedClients::hosted_among(const std::vector<int>& clients) const {
  std::vector<std::int64_t> hosted;
  for (int client : clients) {
    if (hosts(client)) {
      hosted.push_back(client - first_);
    }
  }
  return hosted;
}

void HostedClients::init_local_models(const torch::Tensor& initial) {
  local_states_ =
      initial.to(torch::kFloat32).reshape({1, -1}).repeat({static_cast<std::int64_t>(size()), 1});
}

torch::Tensor HostedClients::local_model(int i) const {
  if (!has_local_models()) {
    throw ConfigError("round plan: client " + std::to_string(first_ + i) +
                      " trains its local model, but the clients keep none (the algorithm must "
                      "declare keeps_local_models)");
  }
  return local_states_[i];
}

void HostedClients::keep_trained(int i, const torch::Tensor& trained) {
  if (has_local_models()) {
    local_states_[i].copy_(trained);
  }
}

void HostedClients::keep_optimizers(local::Solver solver, double local_lr_decay) {
  kept_optimizers_ = KeptOptimizers(size(), solver, local_lr_decay);
}

void HostedClients::clear_memories() { memories_.assign(static_cast<std::size_t>(size()), {}); }

algo::LocalClient HostedClients::view(int i, int round, std::uint64_t seed,
                                      const torch::Tensor& server_states) {
  const auto at = static_cast<std::size_t>(i);
  algo::LocalClient client;
  client.id = first_ + i;
  client.round = round;
  client.max_steps =
      step_limits_.empty() ? 0 : step_limits_.at(static_cast<std::size_t>(client.id));
  client.seed = seed;
  client.objective = objective_;
  // Views, no copies: the stacks hold the hosted clients' samples one client after another.
  client.train_inputs = train_.inputs_of(i);
  client.train_targets = train_.targets_of(i);
  client.test_inputs = test_.inputs_of(i);
  client.test_targets = test_.targets_of(i);
  if (has_local_models()) {
    local_views_[at] = local_states_[i];  // a view: changes reach the local model
    client.local_model = &local_views_[at];
  }
  client.memory = &memories_[at];
  client.server_models = &server_states;
  return client;
}

void HostedClients::seed_dropout(model::Network& model, int i, int round, std::uint64_t seed,
                                 core::Purpose purpose) const {
  const auto dropout_seed = core::dropout_seed(
      seed, purpose, static_cast<std::uint64_t>(first_ + i), static_cast<std::uint64_t>(round));
  model::set_dropout_generator(model, model::dropout_generator(dropout_seed, device_));
}

}  // namespace cflrun::run
