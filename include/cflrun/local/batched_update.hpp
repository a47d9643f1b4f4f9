#pragma once

/// @file
/// Local updates of many clients at once on a model::ClientBatchedNetwork (issue 23): every
/// mini-batch step runs all clients' forward and backward passes in the same kernels and one
/// optimizer step over their stacked parameters. Each client draws its mini-batches from its own
/// stream exactly as local::local_update does, so the result equals one client at a time up to
/// the summation order of the batched kernels (float32 rounding).

#include <cstdint>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cflrun/local/local_update.hpp>
#include <cflrun/local/stacked_optimizer.hpp>
#include <cflrun/model/client_batched.hpp>

namespace cflrun::local {

/// One client of a client-batched local update: where its samples lie in the stacked tensors.
struct BatchedClient {
  std::int64_t offset =
      0;                   ///< first row of the client's samples in the stacked inputs and targets.
  std::int64_t count = 0;  ///< n_k >= 1, its number of samples.
  /// Mini-batch steps this client takes instead of local_steps(count, settings) when > 0 (a
  /// straggler's partial work, issue 45).
  std::int64_t max_steps = 0;
  at::Generator generator;  ///< CPU generator of its (seed, kLocalUpdate, client, round) stream.
  /// Models with dropout: the client's masks come from model::dropout_generator(dropout_seed),
  /// as its own model's forward passes draw them (core::dropout_seed of its stream), so that they
  /// equal that model's draws whichever clients share the batch.
  std::uint64_t dropout_seed = 0;
  /// The client's kept optimizer (FedSoft's persistent one, the CFL notebook's): its state before
  /// this update, replaced by its state after. Null: a fresh optimizer of the settings.
  OptimizerState* kept = nullptr;
  /// [K] float64 importance weights u_s of the client's proximal term (settings.proximal, FedSoft
  /// Eq. 4, FedProx); undefined: none.
  torch::Tensor proximal_importance;
};

/// local_update (CLoVE Alg. 1 line 11) for clients [0, g) of `network` at once: client c trains
/// its stacked parameters on rows [offset, offset + count) of `inputs`/`targets` with a fresh
/// optimizer of settings.solver (Adam or SGD with momentum and weight decay, as torch::optim's) or
/// its kept one, plus its proximal term (mu/2) sum_s u_s ||w - c_s||^2 where it has importance
/// weights (mu and the centers c_s from settings.proximal), mini-batches in the order its generator
/// draws (one randperm per epoch), its batch norm over its own batch and its dropout masks drawn as
/// local_update's forward passes would draw them from model::dropout_generator(dropout_seed).
/// @param network   clients [0, g) loaded (ClientBatchedNetwork::load), trained in place.
/// @param inputs    [n, ...sample shape] float32 on the network's device, all clients' samples.
/// @param targets   [n] int64 labels or float32 values.
/// @param clients   g clients with local_steps non-increasing in c (sort by count, descending).
/// @param settings  the local solver; settings.optimizer (a one-client kept optimizer) must be
/// null.
/// @return          [g] each client's mean mini-batch loss over its last epoch (without the
///                  proximal term).
/// @throws ConfigError if settings.optimizer is set; ShapeError if a client has no samples, their
///         steps increase, g exceeds the network's capacity, or the proximal centers are not
///         [K, P] with K importance weights.
std::vector<double> batched_local_update(model::ClientBatchedNetwork& network,
                                         const torch::Tensor& inputs, const torch::Tensor& targets,
                                         std::vector<BatchedClient>& clients,
                                         const LocalUpdateSettings& settings);

/// local_gradient (CLoVE Alg. 1 line 12, Option II) for clients [0, g) of `network` at once: the
/// gradient of each client's mean training loss, accumulated over mini-batches of `batch_size` in
/// data order, left in the stacked parameters' gradients (ClientBatchedNetwork::gradients).
/// @param clients  g clients with counts non-increasing in c.
/// @return         [g] each client's mean training loss.
/// @throws ShapeError as batched_local_update.
std::vector<double> batched_local_gradient(model::ClientBatchedNetwork& network,
                                           const torch::Tensor& inputs,
                                           const torch::Tensor& targets,
                                           const std::vector<BatchedClient>& clients,
                                           int batch_size, model::Objective objective);

}  // namespace cflrun::local
