#pragma once
/// @file
/// The clients one rank hosts, with their data stacked so that one forward pass serves many clients.

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include <cflrun/data/client_data.hpp>
#include <cflrun/model/objective.hpp>
#include <cflrun/run/local_update.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// What each hosted client measured on its assigned model after aggregation.
struct ClientEvaluation {
  std::vector<double> accuracy;   ///< [m] fraction of test samples classified correctly (NaN without labels).
  std::vector<double> test_loss;  ///< [m] mean per-sample loss on the test samples (model::per_sample_loss).
};

/// Clients [first, first + m) of a run, hosted on this rank. Their training (test) samples are
/// stacked into one [n, ...sample shape] tensor with a per-sample owner index, so computing loss
/// vectors or test metrics costs one batched forward pass per model rather than one per client and
/// model (the loss-vector phase dominates a CLoVE round).
class ClientGroup {
 public:
  /// Materialises the clients' samples on `device`.
  /// @param first, end  client ids [first, end) of `data`; may be empty.
  /// @param objective   the loss of loss vectors, local updates and evaluation.
  ClientGroup(const data::ClientData& data, int first, int end, model::Objective objective, torch::Device device);

  /// Global id of the first hosted client.
  int first_client() const { return first_; }
  /// Number m of hosted clients (0 on the server rank when there are workers).
  int size() const { return static_cast<int>(train_counts_.size()); }

  /// Loss vectors of the hosted participating clients (CLoVE Alg. 1 lines 5-7): entry [i, j] is
  /// the mean per-sample loss of the i-th hosted participant's whole training set under model j,
  /// in eval mode without gradients (clove-official-setup.md Sec. 11). The small CNN runs all K
  /// models in one stacked pass (ConvNetStack); other models run one after another.
  /// @param participants  ids of this round's participants (all clients, increasing).
  /// @return [p, K] float64, row-major, p = hosted participants in increasing id order.
  std::vector<double> loss_vectors(ModelSet& models, const std::vector<int>& participants);

  /// Runs every hosted client's local update on its assigned model (Alg. 1 line 11) and sums the
  /// results per model, weighted by training-set size (the numerator and denominator of line 14).
  /// @param assignment  [M] model of every client (global ids); -1 for a client that does not
  ///                    participate this round (it does not train).
  /// @param round       0-based round, selects the clients' random streams.
  /// @param seed        run seed.
  /// @param train_loss  out: [m] mean training loss of each hosted client's last local epoch
  ///                    (NaN for a client that does not participate).
  /// @return            K*P weighted state sums (row-major) followed by K sample counts; with
  ///                    settings.gradient_averaging, weighted gradient sums (Option II).
  std::vector<double> local_updates(const std::vector<int>& assignment, ModelSet& models, int round,
                                    std::uint64_t seed, const LocalUpdateSettings& settings,
                                    std::vector<double>& train_loss);

  /// Test accuracy and loss of every hosted client on its assigned model (NaN for a client
  /// assigned -1, i.e. not participating).
  /// @param assignment  [M] model of every client (global ids), or -1.
  ClientEvaluation evaluate(const std::vector<int>& assignment, ModelSet& models);

  /// FedSoft Alg. 1 lines 5-12 (client side): every hosted client's importance weights over the K
  /// models (algo::importance_weights of the per-sample losses of its whole training set, eval
  /// mode, no gradients).
  /// @param smoother  sigma > 0.
  /// @return [m, K] float64 CPU.
  torch::Tensor importance_weights(ModelSet& models, double smoother);

  /// Training samples n_k of every hosted client, [m].
  const std::vector<std::int64_t>& train_counts() const { return train_counts_; }

  /// Gives every hosted client a persistent local model (FedSoft), a copy of `initial`.
  /// @param initial          [P] float32 flat state (the official code's client_init_model).
  /// @param keep_optimizers  each client also keeps its own Adam across its updates (FedSoft's
  ///                         official client), instead of a fresh one per update.
  void init_local_models(const torch::Tensor& initial, bool keep_optimizers = false);

  /// FedSoft Alg. 1 lines 21-22, client side: every hosted client with a non-zero contribution
  /// updates its persistent local model on F_k(w) + (mu/2) sum_s u_ks ||w - c_s||^2 (Eq. 4; the
  /// centers c_s are `models`), and the local models are summed per center, weighted by the
  /// contributions.
  /// @param contributions  [K, M] float64 (algo::Algorithm::contributions).
  /// @param importance     [m, K] float64, the hosted clients' importance weights u.
  /// @param settings       local update settings; settings.proximal.mu is the proximal weight.
  /// @param train_loss     out: [m] data loss of each client's last local epoch, NaN if it did not train.
  /// @return               K*P contribution-weighted local-state sums (row-major) then K contribution sums.
  /// @throws ConfigError if init_local_models was not called.
  std::vector<double> proximal_updates(const torch::Tensor& contributions, const torch::Tensor& importance,
                                       ModelSet& models, int round, std::uint64_t seed,
                                       const LocalUpdateSettings& settings, std::vector<double>& train_loss);

  /// Test accuracy and loss of every hosted client's local model (FedSoft's personalised models).
  ClientEvaluation evaluate_local_models(ModelSet& models);

  /// PACFL signatures of every hosted client (cluster::data_signature of its training inputs).
  /// @return [m * d * p] float64, client-major, then the [d, p] matrix row-major.
  std::vector<double> signatures(int p) const;

  /// Seconds spent in LibTorch forward/backward work since the last call; resets the counter.
  double take_compute_seconds();

 private:
  struct Stack {
    torch::Tensor inputs;   // [n, ...sample shape] float32 on device
    torch::Tensor targets;  // [n] int64 or float32 on device
    torch::Tensor owner;    // [n] int64 on device: hosted-client index of each sample
  };
  Stack stack(const std::vector<data::ClientSamples>& samples, const data::ClientData& data) const;
  /// Hosted client i's local update of `model` (a gradient with settings.gradient_averaging),
  /// mini-batches from the (seed, kLocalUpdate, client, round) stream; returns its training loss.
  double train_client(model::Network& model, int i, int round, std::uint64_t seed, const LocalUpdateSettings& settings);
  /// Every model's loss on each training sample of `rows`: [r, K] float64 on the device.
  torch::Tensor per_sample_training_losses(ModelSet& models, const torch::Tensor& rows);
  /// Training-sample rows of the given hosted clients, [n] int64 on the device.
  torch::Tensor rows_of(const std::vector<std::int64_t>& hosted) const;
  /// Training rows of all hosted clients, or only of `hosted`, [n] int64 on the device.
  torch::Tensor training_rows(const std::vector<std::int64_t>& hosted) const;
  /// Per-client means of the sums (NaN where `absent` or, for accuracy, without labels).
  ClientEvaluation per_client_means(const torch::Tensor& loss_sums, const torch::Tensor& correct_sums,
                                    const torch::Tensor& absent) const;

  int first_;
  model::Objective objective_;
  torch::Device device_;
  Stack train_;
  Stack test_;
  std::vector<std::int64_t> train_offsets_;  // [m + 1] start of each client's rows in train_
  std::vector<std::int64_t> train_counts_;   // [m]
  std::vector<std::int64_t> test_counts_;    // [m]
  torch::Tensor local_states_;               // [m, P] float32 CPU: FedSoft's persistent local models
  bool keep_optimizers_ = false;
  std::vector<std::unique_ptr<torch::optim::Adam>> local_optimizers_;  // [m], made at a client's first update
  double compute_seconds_ = 0.0;
};

}  // namespace cflrun::run
