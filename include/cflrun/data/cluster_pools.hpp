#pragma once
/// @file
/// The building blocks of `make_partition`: one data pool per ground-truth cluster (step 2 of the
/// official pipeline, shared/papers/clove-official-setup.md Sec. 0) and the split of a pool among
/// the cluster's clients (step 3, the official `assign_data_to_clients_RR_without_replacement`).

#include <cstdint>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cflrun/data/dataset.hpp>
#include <cflrun/data/partition.hpp>

namespace cflrun::data {

/// The data of one ground-truth cluster before it is split among the cluster's clients.
struct ClusterPool {
  torch::Tensor train;        ///< [n_train] int64 indices into the train split.
  torch::Tensor test;         ///< [n_test] int64 indices into the test split.
  int rotation_quarters = 0;  ///< counter-clockwise quarter turns of the cluster's images.
  std::vector<std::int64_t> label_map;  ///< [num_classes]: label y becomes label_map[y].
};

/// Second index of the Purpose::kPartition random streams (the first is the cluster or class).
/// Part of the reproducibility contract: never renumber, only append.
enum class PartitionStream : std::uint64_t {
  kClientSplitTrain = 0,   ///< shuffle of cluster a's train pool before it is cut into clients.
  kClientSplitTest = 1,    ///< same for the test pool.
  kClassShuffleTrain = 2,  ///< concept shift: shuffle of class a's train indices among clusters.
  kClassShuffleTest = 3,   ///< same for the test indices.
};

/// The LibTorch generator of one partition stream:
/// make_torch_generator(data_seed, Purpose::kPartition, index, stream).
/// @param index  the cluster (client split) or the class (class shuffle).
at::Generator partition_generator(std::uint64_t data_seed, PartitionStream stream,
                                  std::uint64_t index);

/// The identity label map [0, 1, ..., num_classes - 1].
std::vector<std::int64_t> identity_label_map(int num_classes);

/// Cluster pools of any kind; dispatches to the three functions below.
/// @throws ConfigError if spec.clusters is outside [1, max_clusters(spec.kind, num_classes)].
/// @throws DataError from concept_shift_label_maps.
std::vector<ClusterPool> cluster_pools(const PartitionSpec& spec, const ImageDataset& dataset);

/// Label skew 1 (paper Sec. 5.1, official exp203): cluster k holds ALL samples of classes
/// {2k, 2k+1} of each split (FMNIST: 12 000 train / 2 000 test); identity labels, no rotation.
/// @throws ConfigError if clusters is outside [1, num_classes / 2].
std::vector<ClusterPool> label_skew_1_pools(const ImageDataset& dataset, int clusters);

/// Concept shift (paper Sec. 5.1, official exp111): every class of each split is shuffled
/// (stream kClassShuffleTrain/Test, index = class) and cut into `clusters` equal disjoint parts of
/// floor(count / K) samples; cluster k's pool is the union of part k of every class, ordered by
/// class. Labels are permuted by concept_shift_label_maps.
/// The official code draws exactly 1 250 train / 200 test samples per class and cluster; we take
/// the whole disjoint share count / K (FMNIST, K = 4: 1 500 / 250) instead, which has the same
/// distribution and only matters if a client asks for more than the official pool holds.
/// @throws ConfigError if clusters is outside [1, max_clusters(kConceptShift, num_classes)].
/// @throws DataError as concept_shift_label_maps.
std::vector<ClusterPool> concept_shift_pools(const ImageDataset& dataset, int clusters,
                                             std::uint64_t data_seed);

/// The concept-shift label map of each cluster, [clusters][num_classes]: the identity with two
/// disjoint swaps applied. Clusters 0..3 use the official fixed swaps (0<->3, 8<->9), (1<->4,
/// 6<->9), (1<->2, 3<->6), (3<->5, 4<->7); cluster k >= 4 draws two disjoint swaps from
/// make_engine(data_seed, Purpose::kConceptShiftSwaps, k), redrawing until its permutation differs
/// from every earlier cluster's.
/// @throws ConfigError if clusters is outside [1, max_clusters(kConceptShift, num_classes)].
/// @throws DataError if num_classes < 10 (the official swaps use classes 0..9).
std::vector<std::vector<std::int64_t>> concept_shift_label_maps(int clusters, int num_classes,
                                                                std::uint64_t data_seed);

/// Feature skew (paper Sec. 5.1, official exp301): every cluster's pool is the WHOLE split, and
/// cluster k's images are turned k quarter turns counter-clockwise (0, 90, 180, 270 degrees).
/// Each cluster shuffles its pool independently, so one image may serve several clusters under
/// different rotations, as in the official code. Identity labels.
/// @throws ConfigError if clusters is outside [1, 4].
std::vector<ClusterPool> feature_skew_pools(const ImageDataset& dataset, int clusters);

/// Splits one pool among `clients` clients (official
/// assign_data_to_clients_RR_without_replacement): the pool is shuffled with
/// torch::randperm(generator), cut into `clients` disjoint chunks of floor(pool / clients) indices,
/// and client w takes the first `samples` indices of chunk w.
/// @param pool     [n] int64 indices into one split.
/// @param samples  indices per client, 1 <= samples <= n / clients.
/// @return         [clients][samples] indices, pairwise disjoint if the pool has no repetition.
/// @throws DataError if samples exceeds n / clients; ConfigError if clients or samples < 1.
std::vector<std::vector<std::int64_t>> split_among_clients(const torch::Tensor& pool, int clients,
                                                           std::int64_t samples,
                                                           at::Generator generator);

}  // namespace cflrun::data
