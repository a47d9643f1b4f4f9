#pragma once

/// @file
/// The local optimizer of a client-batched local update: torch::optim::Adam's or SGD's update rule
/// applied to stacked parameters [G, ...], so that clients [0, g) step in one pass each.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/local/local_update.hpp>

namespace cflrun::local {

/// Fresh optimizer state (zero moments) for stacked parameters; step() applies, per element, the
/// same arithmetic as torch::optim::Adam (Kingma and Ba, Alg. 1, with L2 weight decay added to the
/// gradient) or torch::optim::SGD (heavy-ball momentum without dampening), so every client's
/// parameters move as with its own optimizer.
class StackedOptimizer {
 public:
  /// @param parameters  [G, ...] stacked parameters (ClientBatchedNetwork::parameters).
  /// @param settings    solver, learning rate, momentum, weight decay.
  StackedOptimizer(const std::vector<torch::Tensor>& parameters,
                   const LocalUpdateSettings& settings);

  /// One step of clients [0, g) from their gradients, all at their `step`-th step (1-based; Adam's
  /// bias correction). Parameters without a gradient are left alone.
  void step(std::int64_t g, std::int64_t step);

 private:
  std::vector<torch::Tensor> parameters_;
  LocalUpdateSettings settings_;
  std::vector<torch::Tensor> first_;   // Adam exp_avg or SGD momentum buffer, [G, ...]
  std::vector<torch::Tensor> second_;  // Adam exp_avg_sq, [G, ...]
};

}  // namespace cflrun::local
