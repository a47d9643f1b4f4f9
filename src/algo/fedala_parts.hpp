#pragma once
// Private to src/algo: what FedALA's one-client (fedala.cpp) and client-batched
// (fedala_batched.cpp) adaptive local aggregations share.

#include <cstdint>
#include <deque>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/algo/fedala.hpp>

namespace cflrun::algo::detail {

inline constexpr int kStableLosses = 10;     // PFLlib's num_pre_loss
inline constexpr double kStableStd = 0.1;    // PFLlib's threshold
inline constexpr int kMaxStartPasses = 500;  // a safety cap PFLlib does not have

/// The contiguous random slice of a client's training samples its ALA learns on: rows [start,
/// start + count) of its own samples, count = s% of them (at least 1), start from its (seed,
/// kAdaptiveAggregation, id, round) stream.
struct AlaSlice {
  std::int64_t start = 0;
  std::int64_t count = 0;
};
AlaSlice ala_slice(const LocalClient& client, double sample_percent);

/// The client's ALA weights W kept in its memory (empty before its first ALA).
std::vector<torch::Tensor> kept_weights(const LocalClient& client);
/// Keeps W and marks the client's ALA as started.
void keep_weights(LocalClient& client, const std::vector<torch::Tensor>& weights);
/// Whether the client's first ALA (the one repeated until stable) is done.
bool ala_started(const LocalClient& client);

/// Whether another ALA pass follows `passes` passes with these last losses: the first ALA repeats
/// until more than kStableLosses losses are recorded and the last kStableLosses have a population
/// standard deviation below kStableStd (at most kMaxStartPasses); later ones make one pass.
bool another_pass(bool until_stable, int passes, const std::deque<double>& losses);

/// PFLlib's test for an untrained client: its first parameter tensor (the first `floats` of the
/// flat states) sums to the same under both models.
bool untrained(const torch::Tensor& global, const torch::Tensor& local, std::int64_t floats);

/// FedALA's adaptive local aggregation of every client of `batch` at once (the client-batched form
/// of one client's adapt: FedAla's class comment): `network` is used as scratch; on return each
/// client's local model and memory are what one client's ALA leaves, and `network` holds the local
/// models. Clients whose first ALA repeats until stable run together where their dropout masks
/// can be drawn pass by pass (no dropout, or the CPU), else one at a time.
void batched_adaptive_aggregation(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                  const FedAlaOptions& options, std::int64_t batch_size);

}  // namespace cflrun::algo::detail
