#pragma once
/// @file
/// The soft-clustering quantities of FedSoft (Ruan et al., shared/papers/004, Algorithm 1 and
/// Eq. 6): each client's importance weights over the S cluster centres, the server's aggregation
/// weights, and the per-cluster random client selection. algo::FedSoft (fedsoft.hpp) and the
/// clients' side in run::ClientGroup use them.

#include <cstdint>
#include <random>
#include <vector>

#include <torch/types.h>

namespace cflrun::algo {

/// A client's importance weights u_k (Alg. 1 lines 5-12): every sample is matched to the centre
/// with the smallest loss (ties to the lowest index); n_ks counts the samples matched to centre s,
/// a zero count is replaced by sigma * n_k (the counter smoother), and u_ks = n_ks / n_k.
/// @param per_sample_losses  [n_k, S] float, loss of each of the client's samples under each
/// centre.
/// @param smoother           sigma > 0 (FedSoft: 1e-4).
/// @return                   [S] float64; sums to 1 plus sigma per empty centre.
/// @throws ShapeError if per_sample_losses is not 2-D with n_k >= 1 and S >= 1;
///         ConfigError if smoother <= 0.
torch::Tensor importance_weights(const torch::Tensor& per_sample_losses, double smoother);

/// The server's aggregation weights (Eq. 6): v_sk = u_ks n_k / sum_k' u_k's n_k', each centre's
/// distribution over clients.
/// @param importance    [M, S] float64, u of every client.
/// @param sample_counts [M] float64, n_k.
/// @return              [S, M] float64, every row sums to 1.
/// @throws ShapeError if the shapes disagree; DataError if a row cannot be normalised (all zero).
torch::Tensor aggregation_weights(const torch::Tensor& importance,
                                  const torch::Tensor& sample_counts);

/// Alg. 1 line 20: for every centre s, `count` distinct clients drawn without replacement with
/// probabilities v_s (successive draws renormalised over the clients not yet drawn).
/// @param weights  [S, M] float64 rows of aggregation_weights.
/// @param count    clients per centre, 1 <= count <= M.
/// @param engine   random stream; advanced.
/// @return         [S] lists of `count` client indices each, in the order drawn.
/// @throws ConfigError if count is outside [1, M].
std::vector<std::vector<int>> select_clients(const torch::Tensor& weights, int count,
                                             std::mt19937_64& engine);

}  // namespace cflrun::algo
