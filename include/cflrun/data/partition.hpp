#pragma once
/// @file
/// Partitions of a dataset among M = K x clients_per_cluster clients in K ground-truth clusters
/// (CLoVE paper Sec. 5.1; exact construction of the official code: shared/papers/clove-official-setup.md).

#include <cstdint>
#include <string>
#include <vector>

#include <cflrun/data/dataset.hpp>

namespace cflrun::data {

/// The kinds of heterogeneity between clusters (issue 2 command-line values).
enum class PartitionKind {
  kLabelSkew1,    ///< "label_skew_1": cluster k holds classes {2k, 2k+1} only (K <= num_classes/2).
  kConceptShift,  ///< "concept_shift": all classes; cluster k permutes labels by two disjoint swaps.
  kFeatureSkew,   ///< "feature_skew": all classes; cluster k rotates images by k x 90 degrees (K <= 4).
};

/// Parses a partition name. @throws ConfigError naming the accepted values otherwise.
PartitionKind parse_partition_kind(const std::string& name);

/// The command-line name of a partition kind, e.g. "label_skew_1".
std::string partition_name(PartitionKind kind);

/// The largest number of clusters K a partition kind allows on a dataset with `num_classes`
/// classes: label skew 1 num_classes / 2 (two classes per cluster), feature skew 4 (rotations by
/// 0, 90, 180, 270 degrees), concept shift the number of distinct permutations made of two
/// disjoint swaps, C(n,2) C(n-2,2) / 2 (630 for 10 classes).
int max_clusters(PartitionKind kind, int num_classes);

/// Checks the number of clusters a partition kind is asked for.
/// @throws ConfigError naming --clusters and the allowed range if clusters is outside
///         [1, max_clusters(kind, num_classes)].
void check_cluster_count(PartitionKind kind, int clusters, int num_classes);

/// What to build: sizes and the seed of the data partition.
struct PartitionSpec {
  PartitionKind kind = PartitionKind::kLabelSkew1;
  int clusters = 5;                  ///< K, number of ground-truth clusters.
  int clients_per_cluster = 5;       ///< clients in each cluster; M = K x this.
  std::int64_t train_samples = 500;  ///< training samples per client.
  std::int64_t test_samples = 400;   ///< test samples per client.
  std::uint64_t data_seed = 1;       ///< seed of every random draw of the partition (`--data-seed`).
};

/// Everything that defines one client's local data, as indices into the dataset's splits plus
/// the cluster's transformation. Cheap to compute on every rank; materialise with `client_samples`.
struct ClientShard {
  int client = 0;                          ///< client id in [0, M); clients are numbered cluster by cluster.
  int true_cluster = 0;                    ///< ground-truth cluster in [0, K).
  std::vector<std::int64_t> train_indices; ///< indices into the train split, without repetition.
  std::vector<std::int64_t> test_indices;  ///< indices into the test split, without repetition.
  int rotation_quarters = 0;               ///< counter-clockwise quarter turns applied to images (feature skew).
  std::vector<std::int64_t> label_map;     ///< [num_classes]: label y becomes label_map[y] (concept shift); identity otherwise.
};

/// The whole partition: one shard per client, in client order.
struct Partition {
  PartitionSpec spec;
  std::vector<ClientShard> clients;  ///< [M] shards, client i at position i.
  /// Ground-truth cluster of every client, [M].
  std::vector<int> true_clusters() const;
};

/// Checks a spec before any data is touched.
/// @throws ConfigError naming the flag if check_cluster_count fails (--clusters),
///         clients_per_cluster < 1 (--clients-per-cluster), train_samples < 1 (--train-samples)
///         or test_samples < 1 (--test-samples).
void validate_partition_spec(const PartitionSpec& spec, int num_classes);

/// Builds the partition deterministically from `spec.data_seed` (issue 2 item 3).
/// Per cluster a pool of each split is formed (label skew 1: the whole of the cluster's two classes;
/// concept shift: a disjoint, equal share of every class; feature skew: the whole split, rotated);
/// the pool is shuffled and cut into clients_per_cluster disjoint chunks, and each client takes the
/// first train_samples (test_samples) points of its chunk, as the official code does.
/// Random streams: see PartitionStream in <cflrun/data/cluster_pools.hpp>.
/// @throws ConfigError as validate_partition_spec, i.e. if K or clients_per_cluster is not
///         positive, K exceeds what the kind allows (label skew 1: num_classes / 2; feature skew:
///         4), or a sample count is below 1.
/// @throws DataError if a pool cannot give every client its samples without replacement; the
///         message gives the largest feasible --train-samples/--test-samples.
Partition make_partition(const PartitionSpec& spec, const ImageDataset& dataset);

/// A client's samples, ready for a model.
struct ClientSamples {
  torch::Tensor inputs;  ///< [n, 1, 28, 28] float32 in [0, 1], rotated as the shard says.
  torch::Tensor targets; ///< [n] int64, labels after the shard's label map.
};

/// Materialises the train (`train == true`) or test samples of one shard from the dataset:
/// pixels / 255 as float32, rotated by `shard.rotation_quarters` counter-clockwise quarter turns
/// (torch::rot90 on dims (H, W), like PIL's rotate(90) in the official code), labels mapped through
/// `shard.label_map`. Both tensors are contiguous.
/// @throws ShapeError if the split's images are not [N, 1, 28, 28] uint8 or the label map does not
///         have dataset.num_classes entries.
ClientSamples client_samples(const ImageDataset& dataset, const ClientShard& shard, bool train);

}  // namespace cflrun::data
