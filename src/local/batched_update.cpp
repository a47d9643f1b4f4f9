// Client-batched local updates (include/cflrun/local/batched_update.hpp): the clients'
// mini-batches drawn as local_update draws them, run in lockstep (client_schedule.hpp) with one
// optimizer step over the stacked parameters per mini-batch.
#include <cflrun/local/batched_update.hpp>

#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/local/client_schedule.hpp>
#include <cflrun/local/stacked_optimizer.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::local {
namespace {

std::vector<std::uint64_t> dropout_seeds(const std::vector<BatchedClient>& clients) {
  std::vector<std::uint64_t> seeds;
  for (const auto& client : clients) {
    seeds.push_back(client.dropout_seed);
  }
  return seeds;
}

/// The clients' proximal terms (mu/2) sum_s u_s ||w - c_s||^2 as (mu/2) (U ||w||^2 - 2 <w, a>)
/// with U = sum_s u_s and a = sum_s u_s c_s per client (the same gradient; local_update's form).
class BatchedProximal {
 public:
  BatchedProximal(const model::ClientBatchedNetwork& network, const ProximalTerm& term,
                  const std::vector<BatchedClient>& clients)
      : mu_(term.mu) {
    std::vector<torch::Tensor> importance;
    for (const auto& client : clients) {
      if (client.proximal_importance.defined()) {
        importance.push_back(client.proximal_importance);
      }
    }
    if (mu_ <= 0.0 || importance.empty()) {
      mu_ = 0.0;
      return;
    }
    const auto& centers = term.centers;
    if (importance.size() != clients.size() || centers.dim() != 2 ||
        importance.front().numel() != centers.size(0)) {
      throw ShapeError(
          "client-batched proximal term: expected [K, P] centers and K importance "
          "weights for every client, but got " +
          c10::str(centers.sizes()) + " and " + std::to_string(importance.size()) + " of " +
          std::to_string(clients.size()) + " clients with weights");
    }
    const auto weights = torch::stack(importance);  // [g, K] float64
    const auto& parameters = network.parameters();
    const auto device = parameters.front().device();
    total_weights_ = weights.sum(1).to(device, network.dtype());
    const auto anchors = weights.to(torch::kFloat32).matmul(centers);  // [g, P]
    std::int64_t offset = 0;
    for (const auto& parameter : parameters) {
      auto shape = parameter.sizes().vec();
      shape[0] = anchors.size(0);
      const auto floats = parameter.numel() / parameter.size(0);
      anchors_.push_back(
          anchors.narrow(1, offset, floats).reshape(shape).to(device, network.dtype()));
      offset += floats;
    }
  }

  /// losses [g_s] plus each client's proximal term (unchanged without one).
  torch::Tensor add_to(torch::Tensor losses, const model::ClientBatchedNetwork& network) const {
    if (mu_ <= 0.0) {
      return losses;
    }
    const auto g = losses.size(0);
    const auto& parameters = network.parameters();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const auto w = parameters[i].narrow(0, 0, g).flatten(1);
      const auto a = anchors_[i].narrow(0, 0, g).flatten(1);
      losses = losses + (mu_ / 2.0) * (total_weights_.narrow(0, 0, g) * w.pow(2).sum(1) -
                                       2.0 * (w * a).sum(1));
    }
    return losses;
  }

 private:
  double mu_;
  torch::Tensor total_weights_;         // [g] U per client
  std::vector<torch::Tensor> anchors_;  // [parameter] [g, ...] a per client
};

void require_samples(const std::vector<BatchedClient>& clients) {
  for (const auto& client : clients) {
    if (client.count < 1) {
      throw ShapeError("client-batched update: a client without samples");
    }
  }
}

}  // namespace

std::vector<double> batched_local_update(model::ClientBatchedNetwork& network,
                                         const torch::Tensor& inputs, const torch::Tensor& targets,
                                         std::vector<BatchedClient>& clients,
                                         const LocalUpdateSettings& settings) {
  if (settings.optimizer != nullptr) {
    throw ConfigError(
        "client-batched local updates keep each client's optimizer in BatchedClient::kept, not in "
        "settings.optimizer");
  }
  require_samples(clients);
  ClientPasses passes;
  std::vector<std::size_t> last_epoch;  // the client's first step of its last epoch
  for (auto& client : clients) {
    std::vector<std::size_t> epochs;
    passes.push_back(shuffled_batches(client.offset, client.count, settings.batch_size,
                                      local_steps(client.count, settings, client.max_steps),
                                      client.generator, epochs));
    last_epoch.push_back(epochs.back());
  }
  const ClientSchedule schedule(
      passes, draw_dropout_masks(network, passes, dropout_seeds(clients), inputs.device()), network,
      inputs, targets);
  StackedOptimizer optimizer(network.parameters(), settings);
  for (std::size_t c = 0; c < clients.size(); ++c) {
    if (clients[c].kept != nullptr) {
      optimizer.resume(static_cast<std::int64_t>(c), *clients[c].kept);
    }
  }
  const BatchedProximal proximal(network, settings.proximal, clients);
  std::vector<torch::Tensor> losses;
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    const auto step = schedule.gather(s);
    const auto outputs = network.forward(step.inputs, step.pass);
    const auto client_losses = step.mean(
        model::per_sample_loss(settings.objective, outputs.reshape({step.clients * step.width, -1}),
                               step.inputs.flatten(0, 1), step.targets));
    network.set_gradients(proximal.add_to(client_losses, network).sum());
    optimizer.step(step.clients, static_cast<std::int64_t>(s) + 1);
    losses.push_back(client_losses.detach());
  }
  for (std::size_t c = 0; c < clients.size(); ++c) {
    if (clients[c].kept != nullptr) {
      *clients[c].kept = optimizer.state(static_cast<std::int64_t>(c));
    }
  }
  std::vector<std::size_t> steps;
  for (const auto& client : passes) {
    steps.push_back(client.size());
  }
  return last_epoch_means(losses, steps, last_epoch);
}

std::vector<double> batched_local_gradient(model::ClientBatchedNetwork& network,
                                           const torch::Tensor& inputs,
                                           const torch::Tensor& targets,
                                           const std::vector<BatchedClient>& clients,
                                           int batch_size, model::Objective objective) {
  require_samples(clients);
  ClientPasses passes;
  for (const auto& client : clients) {
    std::vector<std::vector<std::int64_t>> batches;
    for (std::int64_t start = 0; start < client.count; start += batch_size) {
      std::vector<std::int64_t> batch;
      for (std::int64_t r = start; r < std::min(client.count, start + batch_size); ++r) {
        batch.push_back(client.offset + r);
      }
      batches.push_back(std::move(batch));
    }
    passes.push_back(std::move(batches));
  }
  const ClientSchedule schedule(
      passes, draw_dropout_masks(network, passes, dropout_seeds(clients), inputs.device()), network,
      inputs, targets);
  std::vector<double> counts;
  for (const auto& client : clients) {
    counts.push_back(static_cast<double>(client.count));
  }
  const auto sizes = torch::tensor(counts, torch::kFloat32).to(inputs.device(), network.dtype());
  auto sums = torch::zeros({static_cast<std::int64_t>(clients.size())}, sizes.options());
  network.zero_grad();
  for (std::size_t s = 0; s < schedule.size(); ++s) {
    const auto step = schedule.gather(s);
    const auto outputs = network.forward(step.inputs, step.pass);
    // Batch sums divided by n_k: the gradient of the client's mean loss over all its samples.
    const auto batch_sums =
        step.sum(model::per_sample_loss(objective, outputs.reshape({step.clients * step.width, -1}),
                                        step.inputs.flatten(0, 1), step.targets));
    (batch_sums / sizes.narrow(0, 0, step.clients)).sum().backward();
    sums.narrow(0, 0, step.clients).add_(batch_sums.detach());
  }
  const auto means = (sums / sizes).to(torch::kCPU, torch::kFloat64);
  return {means.data_ptr<double>(), means.data_ptr<double>() + means.numel()};
}

}  // namespace cflrun::local
