#pragma once
/// @file
/// The clients' data of one run, whatever made it: a partition of an image dataset or a
/// synthetic generator. The run hosts clients through this one interface.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/data/dataset.hpp>
#include <cflrun/data/partition.hpp>

namespace cflrun::data {

/// Every client's samples on demand, plus the ground truth.
struct ClientData {
  std::vector<std::int64_t>
      sample_shape;                ///< one input sample: {C, H, W} for images, {d} for vectors.
  int num_classes = 0;             ///< classes of the targets; 0 for real-valued targets.
  std::vector<int> true_clusters;  ///< [M] ground-truth cluster of each client.
  /// Materialises client c's train (`train == true`) or test samples: inputs [n, ...sample_shape]
  /// float32, targets [n] int64 labels (num_classes > 0) or float32 values. Deterministic.
  std::function<ClientSamples(int client, bool train)> samples;
  /// A changing population (issue 45) only: client c's samples as a member of cluster `cluster`
  /// (data::moved_shard: its own samples for its native cluster, else a draw from that cluster's
  /// pool); empty where the data cannot move between clusters (synthetic data, mixtures).
  std::function<ClientSamples(int client, int cluster, bool train)> samples_in;
  /// Mixture partitions only (FedSoft Sec. 5): [M, S] float64, the share of each of the S source
  /// distributions in client c's data (rows sum to 1); undefined for hard partitions. There
  /// true_clusters holds each client's dominant source (the largest share, ties to the lowest).
  torch::Tensor mixture;
  /// Mixture partitions only: a holdout set of source s in [0, S), drawn from the test split (or
  /// generated) and disjoint from every client's samples; empty for hard partitions.
  std::function<ClientSamples(int source)> holdout;

  /// Number S of source distributions; 0 for hard partitions.
  int num_sources() const { return mixture.defined() ? static_cast<int>(mixture.size(1)) : 0; }

  /// Number M of clients.
  int num_clients() const { return static_cast<int>(true_clusters.size()); }
};

/// The clients of a partition of an image dataset; samples come from client_samples().
/// The returned object shares ownership of `dataset`.
ClientData partitioned_client_data(std::shared_ptr<const ImageDataset> dataset,
                                   Partition partition);

}  // namespace cflrun::data
