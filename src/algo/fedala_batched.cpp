// FedALA's adaptive local aggregation of many clients at once (fedala_parts.hpp): the clients'
// lower parameter tensors take the global values, their last p tensors theta_l + (theta_g -
// theta_l) (.) W, and every batch of every client's ALA slice moves its W in lockstep on a
// model::ClientBatchedNetwork, as adaptive_local_aggregation does for one client.
#include "fedala_parts.hpp"

#include <algorithm>
#include <deque>

#include <torch/csrc/autograd/autograd.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/local/client_schedule.hpp>

namespace cflrun::algo::detail {
namespace {

/// Clients of a batch adapting together, as clients [0, q) of the network.
struct AlaGroup {
  std::vector<std::size_t> positions;  // their positions in the batch
  bool until_stable = false;
};

/// Parameter tensor i of every client's flat state [q, P] as [q, ...parameter shape] views.
std::vector<torch::Tensor> parameter_rows(const model::ClientBatchedNetwork& network,
                                          const torch::Tensor& flat) {
  std::vector<torch::Tensor> rows;
  std::int64_t offset = 0;
  for (const auto& parameter : network.parameters()) {
    const auto floats = parameter.numel() / parameter.size(0);
    auto shape = parameter.sizes().vec();
    shape[0] = flat.size(0);
    rows.push_back(flat.narrow(1, offset, floats).reshape(shape));
    offset += floats;
  }
  return rows;
}

/// The aggregation of one group (see the file comment).
class GroupAggregation {
 public:
  GroupAggregation(ClientBatch& batch, model::ClientBatchedNetwork& network, AlaGroup group,
                   const FedAlaOptions& options, std::int64_t batch_size)
      : batch_(batch),
        network_(network),
        group_(std::move(group)),
        options_(options),
        batch_size_(batch_size),
        q_(static_cast<std::int64_t>(group_.positions.size())) {}

  /// Runs the group's passes and leaves each client's local model and memory as its ALA would.
  void run() {
    load();
    const auto device = batch_.train_inputs.device();
    std::vector<local::DropoutStream> streams;
    const auto seeds = dropout_seeds(batch_, core::Purpose::kFineTune);
    for (const auto at : group_.positions) {
      streams.emplace_back(network_, seeds[at], device);
    }
    std::vector<std::deque<double>> losses(static_cast<std::size_t>(q_));
    std::vector<torch::Tensor> finished(static_cast<std::size_t>(q_));  // state at its last pass
    std::vector<std::vector<torch::Tensor>> finished_weights(static_cast<std::size_t>(q_));
    for (int passes = 1;; ++passes) {
      const auto last = one_pass(streams);
      bool running = false;
      for (std::int64_t c = 0; c < q_; ++c) {
        const auto at = static_cast<std::size_t>(c);
        if (finished[at].defined()) {
          continue;
        }
        losses[at].push_back(last[at]);
        if (losses[at].size() > static_cast<std::size_t>(kStableLosses)) {
          losses[at].pop_front();
        }
        if (another_pass(group_.until_stable, passes, losses[at])) {
          running = true;
          continue;
        }
        finished[at] = network_.states(static_cast<int>(q_))[c];
        for (const auto& w : weights_) {
          finished_weights[at].push_back(w[c].to(torch::kCPU).clone());
        }
      }
      if (!running) {
        break;
      }
    }
    for (std::int64_t c = 0; c < q_; ++c) {
      auto& client = *batch_.clients[group_.positions[static_cast<std::size_t>(c)]];
      keep_weights(client, finished_weights[static_cast<std::size_t>(c)]);
      client.local_model->copy_(finished[static_cast<std::size_t>(c)]);
    }
  }

 private:
  /// Loads the clients' local models; sets the lower tensors to the global ones and the higher
  /// ones to theta_l + (theta_g - theta_l) (.) W with each client's kept W (first all ones).
  void load() {
    const auto& parameters = network_.parameters();
    const auto count = parameters.size();
    if (options_.layers >= static_cast<int>(count)) {
      throw ConfigError("--fedala-layers must be below the model's " + std::to_string(count) +
                        " parameter tensors");
    }
    first_higher_ = count - static_cast<std::size_t>(options_.layers);
    std::vector<torch::Tensor> locals;
    for (const auto at : group_.positions) {
      locals.push_back(*batch_.clients[at]->local_model);
    }
    const auto local_states = torch::stack(locals);
    network_.load(local_states);
    const auto device = parameters.front().device();
    const auto dtype = network_.dtype();
    const auto local = parameter_rows(network_, local_states.to(device, dtype));
    const auto global = parameter_rows(
        network_, (*batch_.clients.front()->server_models)[0].unsqueeze(0).to(device, dtype));
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < count; ++i) {
      auto rows = parameters[i].narrow(0, 0, q_);
      if (i < first_higher_) {
        rows.copy_(global[i].expand_as(rows));
        continue;
      }
      const auto w = i - first_higher_;
      std::vector<torch::Tensor> client_weights;
      for (const auto at : group_.positions) {
        const auto kept = kept_weights(*batch_.clients[at]);
        client_weights.push_back(kept.empty() ? torch::ones_like(global[i][0])
                                              : kept[w].to(device, dtype));
      }
      weights_.push_back(torch::stack(client_weights));
      differences_.push_back(global[i] - local[i]);
      locals_.push_back(local[i]);
      rows.copy_(local[i] + differences_[w] * weights_[w]);
    }
  }

  /// One pass over every client's ALA slice, batch after batch in data order; returns each
  /// client's last batch loss.
  std::vector<double> one_pass(std::vector<local::DropoutStream>& streams) {
    local::ClientPasses passes;
    local::ClientMasks masks(static_cast<std::size_t>(q_));
    for (std::int64_t c = 0; c < q_; ++c) {
      const auto at = group_.positions[static_cast<std::size_t>(c)];
      const auto slice = ala_slice(*batch_.clients[at], options_.sample_percent);
      std::vector<std::vector<std::int64_t>> batches;
      for (std::int64_t begin = 0; begin < slice.count; begin += batch_size_) {
        std::vector<std::int64_t> rows;
        for (std::int64_t r = begin; r < std::min(slice.count, begin + batch_size_); ++r) {
          rows.push_back(batch_.train_offsets[at] + slice.start + r);
        }
        masks[static_cast<std::size_t>(c)].push_back(
            streams[static_cast<std::size_t>(c)].draw(static_cast<std::int64_t>(rows.size())));
        batches.push_back(std::move(rows));
      }
      passes.push_back(std::move(batches));
    }
    const local::ClientSchedule schedule(passes, std::move(masks), network_, batch_.train_inputs,
                                         batch_.train_targets);
    std::vector<torch::Tensor> losses;
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      losses.push_back(step(schedule.gather(s)));
    }
    std::vector<std::size_t> steps;
    std::vector<std::size_t> last_batch;
    for (const auto& client : passes) {
      steps.push_back(client.size());
      last_batch.push_back(client.size() - 1);
    }
    return local::last_epoch_means(losses, steps, last_batch);  // the last batch's loss
  }

  /// One ALA batch of clients [0, g_s): W <- clamp(W - eta grad (.) (theta_g - theta_l), 0, 1),
  /// then the higher tensors from the new W. Returns the clients' losses.
  torch::Tensor step(const local::GatheredPass& pass) {
    const auto& parameters = network_.parameters();
    const auto outputs = network_.forward(pass.inputs, pass.pass);
    const auto losses = pass.mean(model::per_sample_loss(
        batch_.clients.front()->objective, outputs.reshape({pass.clients * pass.width, -1}),
        pass.inputs.flatten(0, 1), pass.targets));
    const std::vector<torch::Tensor> higher(
        parameters.begin() + static_cast<std::ptrdiff_t>(first_higher_), parameters.end());
    const auto gradients = torch::autograd::grad({losses.sum()}, higher);
    torch::NoGradGuard no_grad;
    const auto g = pass.clients;
    for (std::size_t w = 0; w < higher.size(); ++w) {
      auto weights = weights_[w].narrow(0, 0, g);
      const auto difference = differences_[w].narrow(0, 0, g);
      weights.copy_(
          (weights - options_.eta * gradients[w].narrow(0, 0, g) * difference).clamp(0.0, 1.0));
      higher[w].narrow(0, 0, g).copy_(locals_[w].narrow(0, 0, g) + difference * weights);
    }
    return losses.detach();
  }

  ClientBatch& batch_;
  model::ClientBatchedNetwork& network_;
  AlaGroup group_;
  const FedAlaOptions& options_;
  std::int64_t batch_size_;
  std::int64_t q_;
  std::size_t first_higher_ = 0;
  std::vector<torch::Tensor> weights_;      // [higher] W, [q, ...]
  std::vector<torch::Tensor> differences_;  // [higher] theta_g - theta_l, [q, ...]
  std::vector<torch::Tensor> locals_;       // [higher] theta_l, [q, ...]
};

/// The batch's clients that adapt, grouped: those past their first ALA (one pass each) together;
/// those in their first (until stable) together where their masks can be drawn pass by pass, else
/// one by one (dropout on a GPU, whose masks come from one global generator).
std::vector<AlaGroup> groups(const ClientBatch& batch, const model::ClientBatchedNetwork& network) {
  AlaGroup once;
  AlaGroup until{{}, true};
  std::vector<AlaGroup> alone;
  const bool lockstep = network.dropout_layers().empty() || batch.train_inputs.device().is_cpu();
  const auto first_floats = network.parameters().front().numel() / network.capacity();
  for (std::size_t at = 0; at < batch.clients.size(); ++at) {
    const auto& client = *batch.clients[at];
    if (untrained((*client.server_models)[0], *client.local_model, first_floats)) {
      continue;  // PFLlib: an untrained client keeps its model
    }
    if (ala_started(client)) {
      once.positions.push_back(at);
    } else if (lockstep) {
      until.positions.push_back(at);
    } else {
      alone.push_back({{at}, true});
    }
  }
  alone.push_back(std::move(once));
  alone.push_back(std::move(until));
  return alone;
}

}  // namespace

void batched_adaptive_aggregation(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                  const FedAlaOptions& options, std::int64_t batch_size) {
  for (auto& group : groups(batch, network)) {
    if (!group.positions.empty()) {
      GroupAggregation(batch, network, std::move(group), options, batch_size).run();
    }
  }
  std::vector<torch::Tensor> locals;
  for (const auto* client : batch.clients) {
    locals.push_back(*client->local_model);
  }
  network.load(torch::stack(locals));
}

}  // namespace cflrun::algo::detail
