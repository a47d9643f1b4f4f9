#pragma once

/// @file
/// The forward passes of many clients run in lockstep on a model::ClientBatchedNetwork (issue 23,
/// issue 42): pass p of every client still running is gathered from the rank's stacked samples
/// into one [g_p, width, ...] block, with each client's padding marked and its dropout masks
/// drawn as its own model's forward passes draw them. Clients in non-increasing order of their
/// passes make the clients still running at pass p a prefix [0, g_p) of the stacked parameters.
/// The local updates (batched_update.hpp) and the personalised methods' client-batched forms
/// (Per-FedAvg's meta-steps, FedProto's and FedPAC's regularised updates) are loops over it.

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/types.h>

#include <cflrun/model/client_batched.hpp>

namespace cflrun::local {

/// rows[c][p]: the rows (indices into the stacked samples) that client c's forward pass p reads,
/// at least one each.
using ClientPasses = std::vector<std::vector<std::vector<std::int64_t>>>;

/// masks[c][p][d]: client c's dropout mask of dropout layer d in its pass p, [rows, features_d].
using ClientMasks = std::vector<std::vector<std::vector<torch::Tensor>>>;

/// One client's dropout masks, drawn pass after pass from its own stream
/// (model::dropout_generator(seed)) as its own model's forward passes draw them, for loops whose
/// passes are not known in advance (FedALA's adaptive aggregation until its losses are stable). On
/// a GPU the stream is LibTorch's global CUDA generator, seeded at construction: there, draw from
/// one client's stream at a time.
class DropoutStream {
 public:
  DropoutStream(const model::ClientBatchedNetwork& network, std::uint64_t seed,
                torch::Device device);
  /// The masks of the next forward pass over `rows` rows: [rows, features_d] for each dropout
  /// layer d (0 or 1 / (1 - p)); none for a network without dropout.
  std::vector<torch::Tensor> draw(std::int64_t rows);

 private:
  std::vector<model::BatchedLayer> dropouts_;
  std::optional<at::Generator> generator_;
  torch::TensorOptions options_;
};

/// Every client's dropout masks for its passes: for client c, from
/// model::dropout_generator(dropout_seeds[c]), pass after pass, layer after layer, on the pass's
/// rows (model::dropout of ones: 0 or 1 / (1 - p)), so that they equal what its own model's forward
/// passes draw from that generator. Empty masks for a network without dropout.
/// @param dropout_seeds  [g] core::dropout_seed of each client's stream.
ClientMasks draw_dropout_masks(const model::ClientBatchedNetwork& network,
                               const ClientPasses& passes,
                               const std::vector<std::uint64_t>& dropout_seeds,
                               torch::Device device);

/// Pass p of the clients still running, gathered (ClientSchedule::gather).
struct GatheredPass {
  std::int64_t clients = 0;  ///< g_p: clients [0, g_p) of the network take part.
  std::int64_t width = 0;    ///< rows per client: the pass's largest batch.
  torch::Tensor rows;        ///< [g_p * width] int64 row indices (a client's padding repeats its
                             ///< first row).
  torch::Tensor inputs;      ///< [g_p, width, ...sample shape] on the samples' device.
  torch::Tensor targets;     ///< [g_p * width] labels or values.
  torch::Tensor valid;       ///< [g_p, width] 1 for a real row, 0 for padding (network dtype).
  /// Training mode with the clients' dropout masks, and `valid` when some batch is short (batch
  /// norm then normalises each client over its real rows).
  model::BatchedPass pass;

  /// [g_p] each client's mean of `per_row` ([g_p * width]) over its real rows (differentiable).
  torch::Tensor mean(const torch::Tensor& per_row) const;
  /// [g_p] each client's sum of `per_row` over its real rows (differentiable).
  torch::Tensor sum(const torch::Tensor& per_row) const;
};

/// The passes of g clients in lockstep (see the file comment).
class ClientSchedule {
 public:
  /// @param passes   rows[c][p], the number of passes non-increasing in c.
  /// @param masks    draw_dropout_masks of these passes (empty without dropout), or a slice of a
  ///                 longer drawing (FedPAC's two phases share one stream per client).
  /// @param inputs   [n, ...sample shape] the stacked samples, on the network's device.
  /// @param targets  [n] their labels or values.
  /// @throws ShapeError if the clients' passes increase, a pass has no rows, or there are more
  ///         clients than the network holds.
  ClientSchedule(const ClientPasses& passes, ClientMasks masks,
                 const model::ClientBatchedNetwork& network, const torch::Tensor& inputs,
                 const torch::Tensor& targets);

  /// Passes of the first client (the most).
  std::size_t size() const { return clients_.size(); }
  /// g_p, the clients taking part in pass p.
  std::int64_t clients(std::size_t p) const { return clients_[p]; }
  /// Pass p gathered: one index_select of the stacked samples.
  GatheredPass gather(std::size_t p) const;

 private:
  std::vector<std::int64_t> clients_;  // g_p per pass
  std::vector<std::int64_t> widths_;   // widest batch per pass
  std::vector<bool> even_;             // whether every batch of the pass has width_p rows
  std::vector<std::int64_t> starts_;   // first entry of pass p in rows_ and valid_
  torch::Tensor rows_;                 // every pass's [g_p, width_p] block of rows, flat
  torch::Tensor valid_;                // 1/0 per entry of rows_
  std::vector<std::vector<torch::Tensor>> masks_;  // [pass][dropout layer] [g_p, width_p, f]
  const torch::Tensor& inputs_;
  const torch::Tensor& targets_;
  torch::ScalarType dtype_;
};

/// Each client's mean of its per-step values over its last epoch, as local_update returns it.
/// @param values      [steps of client 0] tensors, values[s] = [g_s] (the clients still running).
/// @param steps       [g] the steps client c ran (non-increasing).
/// @param last_epoch  [g] the first step of client c's last epoch.
std::vector<double> last_epoch_means(const std::vector<torch::Tensor>& values,
                                     const std::vector<std::size_t>& steps,
                                     const std::vector<std::size_t>& last_epoch);

/// The mini-batches of a local update over n samples at `offset` of the stacked samples:
/// `steps` batches of `batch_size`, epoch after epoch, each epoch in a fresh order drawn from
/// `generator` (torch::randperm(n)), the epoch's last batch shorter when n is no multiple.
/// @param epoch_starts  out: the index of each epoch's first batch.
std::vector<std::vector<std::int64_t>> shuffled_batches(std::int64_t offset, std::int64_t n,
                                                        std::int64_t batch_size, std::int64_t steps,
                                                        at::Generator& generator,
                                                        std::vector<std::size_t>& epoch_starts);

}  // namespace cflrun::local
