#pragma once
/// @file
/// FedSoft: soft clustered federated learning with proximal local updating (Ruan et al.,
/// shared/papers/004, Algorithm 1, Eq. 4 and Eq. 6).

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// The server side of FedSoft. Every client's data is a mixture of K source distributions and the
/// server keeps K centers c_s. Every tau rounds each client estimates its importance weights u_k
/// (the share of its samples on which center s has the smallest loss, zero counts smoothed by
/// sigma; soft_clustering.hpp). Every round the server turns them into aggregation weights v_sk
/// (Eq. 6) and, for every center, draws `fedsoft_selection` clients with probabilities v_s
/// without replacement; each selected client updates its own persistent local model on
/// F_k(w) + (mu / 2) sum_s u_ks ||w - c_s||^2 (Eq. 4), and each center becomes the plain average of
/// the local models of the clients drawn for it (Alg. 1 line 22; the official code's
/// `_aggregate_fedsoft`). With fedsoft_selection = 0 every client trains and center s is the
/// v_s-weighted average of all local models (the official code's do_selection = False).
///
/// The hard view used for ARI and /clients/assignment is each client's dominant center, the
/// argmax of its latest u (ties to the lowest index).
///
/// Local solver: by default, like every cflrun local update, a fresh Adam per update (the paper
/// allows any local solver); --fedsoft-optimizer persistent keeps each client's Adam across rounds
/// as the official client does (run::ClientGroup). Every client's local model starts from one
/// client initial model, separate from the K centers (official code).
class FedSoft : public Algorithm {
 public:
  /// @throws ConfigError naming the flag if fedsoft_interval < 1, fedsoft_selection is not in
  ///         [0, M], fedsoft_mu < 0, fedsoft_smoother <= 0, or K is not in [1, M].
  explicit FedSoft(const AlgorithmSettings& settings);
  std::string name() const override { return "fedsoft"; }
  int num_models() const override { return settings_.num_clusters; }
  bool needs_loss_vectors(int /*round*/) const override { return false; }
  bool clusters_clients() const override { return true; }
  int importance_interval() const override { return settings_.fedsoft_interval; }
  double importance_smoother() const override { return settings_.fedsoft_smoother; }
  double proximal_weight() const override { return settings_.fedsoft_mu; }
  /// Draws from the (seed, kClientSelection, 0, round) stream. Remembers `importance` for assign().
  /// @throws ShapeError if importance is not [M, K] or sample_counts not [M].
  torch::Tensor contributions(int round, const torch::Tensor& importance, const torch::Tensor& sample_counts) override;
  /// The dominant center of each participant under the importance weights of the last
  /// contributions() call (rank 0 only).
  /// @throws ConfigError if contributions() was not called before.
  std::vector<int> assign(int round, const std::vector<int>& participants, const torch::Tensor& loss_vectors) override;

 private:
  AlgorithmSettings settings_;
  torch::Tensor importance_;  // [M, K] float64, the latest estimates (rank 0)
};

}  // namespace cflrun::algo
