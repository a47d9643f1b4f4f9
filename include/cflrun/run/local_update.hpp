#pragma once
/// @file
/// A client's local update: tau epochs of mini-batch Adam on its own data.

#include <cstdint>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cflrun/model/conv_net.hpp>

namespace cflrun::run {

/// Hyperparameters of LocalUpdate (CLoVE Alg. 1 line 11; Sec. 5.1: Adam, batch 100, tau = 1).
struct LocalUpdateSettings {
  bool gradient_averaging = false;  ///< Option II: send one gradient instead of training tau epochs.
  int local_epochs = 1;      ///< tau: passes over the client's training data.
  int batch_size = 100;      ///< samples per mini-batch; the last batch may be smaller.
  double learning_rate = 1e-3;  ///< Adam step size gamma.
};

/// Trains `model` in place on one client's data with a fresh Adam optimiser (no moment state
/// carries over between updates, as in the official code), cross-entropy loss, mini-batches in an
/// order drawn from `generator` (one shuffle per epoch).
/// @param inputs     [n, 1, 28, 28] float32 on the model's device.
/// @param targets    [n] int64 on the model's device.
/// @param generator  CPU generator of the (seed, kLocalUpdate, client, round) stream.
/// @return           mean mini-batch training loss over the last epoch (nats per sample).
/// @throws ShapeError if inputs and targets disagree in n or n == 0.
double local_update(model::ConvNet& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                    const LocalUpdateSettings& settings, at::Generator& generator);

/// A client's gradient for gradient averaging (CLoVE Alg. 1 line 12, Option II; IFCA Alg. 1):
/// the gradient of its mean training loss at the model's current parameters, accumulated over
/// mini-batches of `batch_size` in data order (so it is the full-batch gradient, deterministic).
/// Leaves the gradient in the parameters' `.grad()`; the parameters are not changed.
/// @param inputs   [n, 1, 28, 28] float32 on the model's device.
/// @param targets  [n] int64.
/// @return         the mean training loss at those parameters (nats per sample).
/// @throws ShapeError if inputs and targets disagree in n or n == 0.
double local_gradient(model::ConvNet& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                      int batch_size);

}  // namespace cflrun::run
