// Client-batched local updates (include/cflrun/local/batched_update.hpp). The mini-batches of all
// clients are laid out once on the CPU (each client's randperm draws, as local_update makes them),
// copied to the device in one piece, and then every step gathers its [g_s, B] samples with one
// index_select. Clients sorted by their number of steps make the clients still training at step s
// a prefix [0, g_s) of the stacked parameters.
#include <cflrun/local/batched_update.hpp>

#include <algorithm>
#include <string>

#include <torch/nn/utils/rnn.h>
#include <torch/utils.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/local/stacked_optimizer.hpp>
#include <cflrun/model/dropout.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::local {
namespace {

/// Every client's sample rows per step, as the steps' [g_s, width_s] blocks of global row indices;
/// a client's batch shorter than the step's widest is padded with its own first row, weight 0.
struct Schedule {
  std::vector<std::int64_t> clients;  // g_s per step
  std::vector<std::int64_t> widths;   // widest batch per step
  std::vector<bool> even;             // whether every batch of the step has width_s rows
  std::vector<std::int64_t> rows;     // the blocks, one after the other
  std::vector<std::int64_t> sizes;    // |batch| of the row's client, same layout
  std::vector<float> valid;           // 1 per row of a batch, 0 for padding, same layout
  std::vector<std::int64_t> starts;   // offset of each step's block in rows and weights
};

/// batches[c][s]: client c's rows in its step s (global indices).
using Batches = std::vector<std::vector<std::vector<std::int64_t>>>;

void add_step(Schedule& schedule, const Batches& batches, std::size_t step) {
  std::size_t g = 0;
  std::size_t width = 0;
  bool even = true;
  while (g < batches.size() && batches[g].size() > step) {
    width = std::max(width, batches[g][step].size());
    even = even && batches[g][step].size() == batches[0][step].size();
    ++g;
  }
  schedule.starts.push_back(static_cast<std::int64_t>(schedule.rows.size()));
  schedule.clients.push_back(static_cast<std::int64_t>(g));
  schedule.widths.push_back(static_cast<std::int64_t>(width));
  schedule.even.push_back(even);
  for (std::size_t c = 0; c < g; ++c) {
    const auto& batch = batches[c][step];
    for (std::size_t r = 0; r < width; ++r) {
      schedule.rows.push_back(r < batch.size() ? batch[r] : batch[0]);
      schedule.sizes.push_back(static_cast<std::int64_t>(batch.size()));
      schedule.valid.push_back(r < batch.size() ? 1.0F : 0.0F);
    }
  }
}

Schedule make_schedule(const Batches& batches) {
  for (std::size_t c = 1; c < batches.size(); ++c) {
    if (batches[c].size() > batches[c - 1].size()) {
      throw ShapeError(
          "client-batched update: clients must come in non-increasing order of their steps");
    }
  }
  Schedule schedule;
  for (std::size_t step = 0; !batches.empty() && step < batches[0].size(); ++step) {
    add_step(schedule, batches, step);
  }
  return schedule;
}

/// The client's mini-batches, `order` cut into batch_size pieces (the last may be shorter).
void cut(std::vector<std::vector<std::int64_t>>& steps, const torch::Tensor& order,
         std::int64_t offset, std::int64_t batch_size, std::int64_t& steps_left) {
  const auto* values = order.data_ptr<std::int64_t>();
  const auto n = order.numel();
  for (std::int64_t start = 0; start < n && steps_left > 0; start += batch_size, --steps_left) {
    std::vector<std::int64_t> batch;
    for (std::int64_t r = start; r < std::min(n, start + batch_size); ++r) {
      batch.push_back(offset + values[r]);
    }
    steps.push_back(std::move(batch));
  }
}

void require_clients(const model::ClientBatchedNetwork& network, std::size_t g) {
  if (g == 0 || g > static_cast<std::size_t>(network.capacity())) {
    throw ShapeError("client-batched update: " + std::to_string(g) +
                     " clients for a network of capacity " + std::to_string(network.capacity()));
  }
}

/// What ScheduleRunner::client_losses adds up per client.
enum class Reduction { kMean, kSum };

/// Dropout masks of every step, masks[s][d] = [g_s, width_s, features_d] for dropout layer d,
/// each client's rows drawn on its batch's shape as its own model's forward pass draws them: from
/// model::dropout_generator(dropout_seed, device), step after step, layer after layer (padding
/// rows 0).
std::vector<std::vector<torch::Tensor>> draw_dropout_masks(
    const std::vector<model::BatchedLayer>& dropouts, const Batches& batches,
    const std::vector<BatchedClient>& clients, torch::Device device, torch::ScalarType dtype) {
  if (dropouts.empty()) {
    return {};
  }
  std::vector<std::vector<torch::Tensor>> drawn(clients.size());  // [c][s * D + d]
  const auto ones = torch::TensorOptions(device).dtype(dtype);
  for (std::size_t c = 0; c < clients.size(); ++c) {
    const auto generator = model::dropout_generator(clients[c].dropout_seed, device);
    for (const auto& batch : batches[c]) {
      for (const auto& layer : dropouts) {
        const auto rows = static_cast<std::int64_t>(batch.size());
        drawn[c].push_back(model::dropout(torch::ones({rows, layer.features}, ones),
                                          layer.probability, generator));
      }
    }
  }
  std::vector<std::vector<torch::Tensor>> masks(batches.empty() ? 0 : batches[0].size());
  for (std::size_t s = 0; s < masks.size(); ++s) {
    for (std::size_t d = 0; d < dropouts.size(); ++d) {
      std::vector<torch::Tensor> rows;
      for (std::size_t c = 0; c < clients.size() && batches[c].size() > s; ++c) {
        rows.push_back(drawn[c][s * dropouts.size() + d]);
      }
      masks[s].push_back(torch::nn::utils::rnn::pad_sequence(rows, /*batch_first=*/true));
    }
  }
  return masks;
}

/// The schedule on the device: each step's per-client losses from one batched forward pass in
/// training mode (batch norm over each client's real rows, the clients' dropout masks).
class ScheduleRunner {
 public:
  ScheduleRunner(const Schedule& schedule, const Batches& batches,
                 const std::vector<BatchedClient>& clients,
                 const model::ClientBatchedNetwork& network, const torch::Tensor& inputs,
                 const torch::Tensor& targets)
      : schedule_(schedule), inputs_(inputs), targets_(targets) {
    const auto device = inputs.device();
    rows_ = torch::tensor(schedule.rows, torch::kLong).to(device);
    valid_ = torch::tensor(schedule.valid, torch::kFloat32).to(device, network.dtype());
    // 1/|batch| per row, 0 for padding, divided in the network's precision.
    weights_ = valid_ / torch::tensor(schedule.sizes, torch::kLong).to(device, network.dtype());
    dropout_masks_ =
        draw_dropout_masks(network.dropout_layers(), batches, clients, device, network.dtype());
  }

  /// Client losses of step s, [g_s]: each client's mean or sum over its batch, differentiable.
  torch::Tensor client_losses(model::ClientBatchedNetwork& network, model::Objective objective,
                              std::size_t s, Reduction reduction) const {
    const auto g = schedule_.clients[s];
    const auto width = schedule_.widths[s];
    const auto rows = rows_.narrow(0, schedule_.starts[s], g * width);
    const auto inputs = inputs_.index_select(0, rows);
    std::vector<std::int64_t> shape{g, width};
    shape.insert(shape.end(), inputs.sizes().begin() + 1, inputs.sizes().end());
    model::BatchedPass pass;
    pass.training = true;
    if (!schedule_.even[s]) {
      pass.valid = valid_.narrow(0, schedule_.starts[s], g * width).view({g, width});
    }
    if (!dropout_masks_.empty()) {
      pass.dropout_masks = dropout_masks_[s];
    }
    const auto outputs = network.forward(inputs.view(shape), pass);
    const auto losses = model::per_sample_loss(objective, outputs.reshape({g * width, -1}), inputs,
                                               targets_.index_select(0, rows))
                            .view({g, width});
    const bool mean = reduction == Reduction::kMean;
    if (schedule_.even[s]) {
      return mean ? losses.mean(1) : losses.sum(1);
    }
    const auto& factors = mean ? weights_ : valid_;
    return (losses * factors.narrow(0, schedule_.starts[s], g * width).view({g, width})).sum(1);
  }

 private:
  const Schedule& schedule_;
  const torch::Tensor& inputs_;
  const torch::Tensor& targets_;
  torch::Tensor rows_;
  torch::Tensor weights_;
  torch::Tensor valid_;
  std::vector<std::vector<torch::Tensor>> dropout_masks_;  // [step][dropout layer]
};

}  // namespace

std::vector<double> batched_local_update(model::ClientBatchedNetwork& network,
                                         const torch::Tensor& inputs, const torch::Tensor& targets,
                                         std::vector<BatchedClient>& clients,
                                         const LocalUpdateSettings& settings) {
  if (settings.proximal.mu > 0.0 || settings.optimizer != nullptr) {
    throw ConfigError(
        "client-batched local updates take no proximal term and no kept optimizer (use "
        "--client-batch 1)");
  }
  require_clients(network, clients.size());
  Batches batches(clients.size());
  std::vector<std::int64_t> last_epoch(
      clients.size());  // the client's first step of its last epoch
  for (std::size_t c = 0; c < clients.size(); ++c) {
    auto& client = clients[c];
    if (client.count < 1) {
      throw ShapeError("client-batched update: a client without samples");
    }
    std::int64_t steps_left = local_steps(client.count, settings);
    while (steps_left > 0) {
      last_epoch[c] = static_cast<std::int64_t>(batches[c].size());
      cut(batches[c], torch::randperm(client.count, client.generator, torch::kLong), client.offset,
          settings.batch_size, steps_left);
    }
  }
  const auto schedule = make_schedule(batches);
  const ScheduleRunner runner(schedule, batches, clients, network, inputs, targets);
  StackedOptimizer optimizer(network.parameters(), settings);
  auto losses = torch::zeros({static_cast<std::int64_t>(schedule.clients.size()),
                              static_cast<std::int64_t>(clients.size())},
                             torch::TensorOptions(inputs.device()).dtype(network.dtype()));
  for (std::size_t s = 0; s < schedule.clients.size(); ++s) {
    network.zero_grad();
    const auto client_losses =
        runner.client_losses(network, settings.objective, s, Reduction::kMean);
    client_losses.sum().backward();
    optimizer.step(schedule.clients[s], static_cast<std::int64_t>(s) + 1);
    losses[static_cast<std::int64_t>(s)]
        .narrow(0, 0, schedule.clients[s])
        .copy_(client_losses.detach());
  }
  const auto on_cpu = losses.to(torch::kCPU, torch::kFloat64);
  const auto* values = on_cpu.data_ptr<double>();
  std::vector<double> epoch_losses(clients.size());
  for (std::size_t c = 0; c < clients.size(); ++c) {
    double sum = 0.0;
    const auto end = static_cast<std::int64_t>(batches[c].size());
    for (std::int64_t s = last_epoch[c]; s < end; ++s) {
      sum += values[s * static_cast<std::int64_t>(clients.size()) + static_cast<std::int64_t>(c)];
    }
    epoch_losses[c] = sum / static_cast<double>(end - last_epoch[c]);
  }
  return epoch_losses;
}

std::vector<double> batched_local_gradient(model::ClientBatchedNetwork& network,
                                           const torch::Tensor& inputs,
                                           const torch::Tensor& targets,
                                           const std::vector<BatchedClient>& clients,
                                           int batch_size, model::Objective objective) {
  require_clients(network, clients.size());
  Batches batches(clients.size());
  for (std::size_t c = 0; c < clients.size(); ++c) {
    std::int64_t all = clients[c].count;
    cut(batches[c], torch::arange(clients[c].count, torch::kLong), clients[c].offset, batch_size,
        all);
  }
  const auto schedule = make_schedule(batches);
  const ScheduleRunner runner(schedule, batches, clients, network, inputs, targets);
  std::vector<double> counts;
  for (const auto& client : clients) {
    counts.push_back(static_cast<double>(client.count));
  }
  const auto sizes = torch::tensor(counts, torch::kFloat32).to(inputs.device(), network.dtype());
  auto sums = torch::zeros({static_cast<std::int64_t>(clients.size())}, sizes.options());
  network.zero_grad();
  for (std::size_t s = 0; s < schedule.clients.size(); ++s) {
    const auto g = schedule.clients[s];
    // Batch sums divided by n_k: the gradient of the client's mean loss over all its samples.
    const auto batch_sums = runner.client_losses(network, objective, s, Reduction::kSum);
    (batch_sums / sizes.narrow(0, 0, g)).sum().backward();
    sums.narrow(0, 0, g).add_(batch_sums.detach());
  }
  const auto means = (sums / sizes).to(torch::kCPU, torch::kFloat64);
  return {means.data_ptr<double>(), means.data_ptr<double>() + means.numel()};
}

}  // namespace cflrun::local
