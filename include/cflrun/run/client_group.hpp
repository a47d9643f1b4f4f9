#pragma once
/// @file
/// The clients one rank hosts, with their data stacked so that one forward pass serves many clients.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/data/partition.hpp>
#include <cflrun/run/local_update.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// What each hosted client measured on its assigned model after aggregation.
struct ClientEvaluation {
  std::vector<double> accuracy;   ///< [m] fraction of test samples classified correctly.
  std::vector<double> test_loss;  ///< [m] mean per-sample cross-entropy on the test samples (nats).
};

/// Clients [first, first + m) of the partition, hosted on this rank. Their training (test) samples
/// are stacked into one [n, 1, 28, 28] tensor with a per-sample owner index, so computing loss
/// vectors or test metrics costs one batched forward pass per model rather than one per client and
/// model (the loss-vector phase dominates a CLoVE round).
class ClientGroup {
 public:
  /// Materialises the clients' samples on `device`.
  /// @param first, end  client ids [first, end) taken from `partition.clients`; may be empty.
  ClientGroup(const data::ImageDataset& dataset, const data::Partition& partition, int first, int end,
              torch::Device device);

  /// Global id of the first hosted client.
  int first_client() const { return first_; }
  /// Number m of hosted clients (0 on the server rank when there are workers).
  int size() const { return static_cast<int>(train_counts_.size()); }

  /// Loss vectors of the hosted participating clients (CLoVE Alg. 1 lines 5-7): entry [i, j] is
  /// the mean per-sample cross-entropy of the i-th hosted participant's whole training set under
  /// model j, in eval mode without gradients (clove-official-setup.md Sec. 11).
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

  /// Seconds spent in LibTorch forward/backward work since the last call; resets the counter.
  double take_compute_seconds();

 private:
  struct Stack {
    torch::Tensor inputs;   // [n, 1, 28, 28] float32 on device
    torch::Tensor targets;  // [n] int64 on device
    torch::Tensor owner;    // [n] int64 on device: hosted-client index of each sample
  };
  static Stack stack(const std::vector<data::ClientSamples>& samples, torch::Device device);
  /// Training-sample rows of the given hosted clients, [n] int64 on the device.
  torch::Tensor rows_of(const std::vector<std::int64_t>& hosted) const;
  /// Test loss and correct predictions of model j on `rows` of `data`, summed per hosted client.
  void accumulate_per_client(ModelSet& models, int j, const Stack& data, const torch::Tensor& rows,
                             torch::Tensor& loss_sums, torch::Tensor& correct_sums);

  int first_;
  torch::Device device_;
  Stack train_;
  Stack test_;
  std::vector<std::int64_t> train_offsets_;  // [m + 1] start of each client's rows in train_
  std::vector<std::int64_t> train_counts_;   // [m]
  std::vector<std::int64_t> test_counts_;    // [m]
  double compute_seconds_ = 0.0;
};

}  // namespace cflrun::run
