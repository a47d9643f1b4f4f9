#pragma once
/// @file
/// Scoring one client's model on its own samples, for algorithms that score clients one by one
/// (algo::ClientProcedure::evaluate); run::ClientGroup scores many clients in stacked passes.

#include <cstdint>

#include <torch/types.h>

#include <functional>
#include <vector>

#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::local {

/// Rows per forward pass when scoring (loss vectors, test metrics). Measured on 2 cores with
/// jobs/fmnist_label_skew1.cfg: 10 000 rows made the loss-vector phase ~5x slower than 1 000 (page
/// faults on ~0.5 GB of activations); 100-300 rows kept the activations cache-sized and let two
/// single-threaded worker ranks scale better (3 ranks: 0.54x the round time of 2 ranks, vs 0.63x
/// with 1 000 rows).
inline constexpr std::int64_t kEvalChunk = 256;

/// Rows per forward pass on a GPU: 256-row passes leave it waiting on kernel launches; 8 192 rows
/// keep the largest model's activations (cifar_cnn's first block: 8 192 x 64 x 32 x 32 floats,
/// 2 GiB) well inside one GPU shared by several ranks.
inline constexpr std::int64_t kGpuEvalChunk = 8192;

/// Rows per scoring forward pass on `device`: kEvalChunk on a CPU, kGpuEvalChunk on a GPU.
inline std::int64_t eval_chunk(const torch::Device& device) {
  return device.is_cuda() ? kGpuEvalChunk : kEvalChunk;
}

/// Adds `model`'s per-sample loss on each of `rows` to loss_sums[owner[row]] and, for objectives
/// with an accuracy, its correct predictions to correct_sums[owner[row]] (eval mode, no gradients,
/// eval_chunk rows per forward pass).
/// @param inputs, targets  stacked samples [n, ...] and [n] on the model's device.
/// @param owner            [n] int64, the group (client, source) of each sample.
/// @param rows             [r] int64 row indices to score.
/// @param loss_sums, correct_sums  float64 sums per group, updated in place.
void add_scores(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
                const torch::Tensor& targets, const torch::Tensor& owner, const torch::Tensor& rows,
                torch::Tensor& loss_sums, torch::Tensor& correct_sums);

/// Test accuracy and mean loss of one model on one client's samples.
struct Score {
  double accuracy =
      0.0;  ///< fraction classified correctly (argmax of the outputs); NaN without labels.
  double loss = 0.0;  ///< mean per-sample loss (model::per_sample_loss).
};

/// Scores `model` in eval mode without gradients, in chunks of 256 samples (the model's mode is
/// restored to train afterwards).
/// @param inputs   [n, ...] float32 on the model's device, n >= 1.
/// @param targets  [n] int64 labels or float32 values.
/// @throws ShapeError if inputs and targets disagree in n or n == 0.
Score score(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
            const torch::Tensor& targets);

/// Calls visit(inputs, targets, valid) on every client's rows [offsets[c], offsets[c] + counts[c])
/// of `inputs`/`targets`, `width` rows of each client at a time: inputs [g, width, ...], targets
/// [g * width] and valid [g, width] float32 on their device (1 for a real row; a client with fewer
/// rows left is padded with its first row, valid 0). For client-batched passes over ragged sets.
/// @param width  >= 1 rows per client and call (eval_chunk(device) / g keeps a call cache-sized).
void for_each_padded_chunk(const torch::Tensor& inputs, const torch::Tensor& targets,
                           const std::vector<std::int64_t>& offsets,
                           const std::vector<std::int64_t>& counts, std::int64_t width,
                           const std::function<void(const torch::Tensor&, const torch::Tensor&,
                                                    const torch::Tensor&)>& visit);

/// score() of clients [0, g) of `network` at once, each on its own samples: client c's model on
/// rows [offsets[c], offsets[c] + counts[c]) of `inputs`/`targets`, in eval mode without
/// gradients, eval_chunk(device) / g rows of every client per forward pass (a client with fewer
/// rows left is padded with its first row, which counts for nothing).
/// @param inputs, targets  stacked samples [n, ...] and [n] on the network's device.
/// @param offsets, counts  [g] each client's first row and rows, counts[c] >= 1.
/// @return [g] scores, as score() of each client's own model.
/// @throws ShapeError if offsets and counts differ in length, g is 0 or above the network's
///         capacity, or a client has no rows.
std::vector<Score> batched_scores(model::ClientBatchedNetwork& network, model::Objective objective,
                                  const torch::Tensor& inputs, const torch::Tensor& targets,
                                  const std::vector<std::int64_t>& offsets,
                                  const std::vector<std::int64_t>& counts);

}  // namespace cflrun::local
