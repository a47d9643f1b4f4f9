#pragma once

/// @file
/// The local optimizer of a client-batched local update: torch::optim::Adam's or SGD's update rule
/// applied to stacked parameters [G, ...], so that clients [0, g) step in one pass each, from a
/// fresh state or each client from the state it kept (FedSoft's persistent optimizer, the CFL
/// notebook's SGD with momentum).

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/local/local_update.hpp>

namespace cflrun::local {

/// One client's optimizer state in the flat layout of its parameters (model::flatten_state's first
/// floats: the parameters, without buffers), what run::KeptOptimizers keeps between updates.
struct OptimizerState {
  /// Steps taken so far (Adam's step count; for SGD, > 0 once the momentum buffer exists).
  std::int64_t steps = 0;
  torch::Tensor first;   ///< [P_params] Adam's exp_avg or SGD's momentum buffer (undefined: zeros).
  torch::Tensor second;  ///< [P_params] Adam's exp_avg_sq (undefined: zeros; unused by SGD).
  double learning_rate = 0.0;  ///< the step size of this update (the kept decayed rate).
};

/// Optimizer state for stacked parameters; step() applies, per element, the same arithmetic as
/// torch::optim::Adam (Kingma and Ba, Alg. 1, with L2 weight decay added to the gradient) or
/// torch::optim::SGD (heavy-ball momentum without dampening), so every client's parameters move as
/// with its own optimizer.
class StackedOptimizer {
 public:
  /// A fresh state (zero moments, step 0) for every client.
  /// @param parameters  [G, ...] stacked parameters (ClientBatchedNetwork::parameters, or a
  ///                    subset: FedPAC's head or body).
  /// @param settings    solver, learning rate, momentum, weight decay.
  StackedOptimizer(const std::vector<torch::Tensor>& parameters,
                   const LocalUpdateSettings& settings);

  /// Client c continues from `state` (its steps and moments) with its learning rate.
  /// @throws ShapeError if a moment is not [floats of the parameters].
  void resume(std::int64_t c, const OptimizerState& state);
  /// Client c's state now (its resumed steps plus those taken since), as resume() takes it
  /// ([P_params] CPU moments in the parameters' dtype).
  OptimizerState state(std::int64_t c) const;

  /// One step of clients [0, g) from their gradients, the `step`-th of this update (1-based) and
  /// of each client its resumed steps + `step`-th (Adam's bias correction; SGD's first step copies
  /// the gradient into the momentum buffer). Parameters without a gradient are left alone.
  void step(std::int64_t g, std::int64_t step);

 private:
  /// [g, 1, ...] per-client factors shaped to broadcast over parameter i's rows.
  torch::Tensor per_client(const std::vector<double>& values, std::int64_t g, std::size_t i) const;
  /// Whether every client of [0, g) has the same learning rate and resumed steps.
  bool uniform(std::int64_t g) const;

  std::vector<torch::Tensor> parameters_;
  LocalUpdateSettings settings_;
  std::vector<torch::Tensor> first_;    // Adam exp_avg or SGD momentum buffer, [G, ...]
  std::vector<torch::Tensor> second_;   // Adam exp_avg_sq, [G, ...]
  std::vector<std::int64_t> resumed_;   // [G] steps taken before this update
  std::vector<std::int64_t> taken_;     // [G] steps taken in this update
  std::vector<double> learning_rates_;  // [G]
};

}  // namespace cflrun::local
