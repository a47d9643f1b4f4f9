#pragma once
/// @file
/// Partitions of a dataset among M = K x clients_per_cluster clients in K ground-truth clusters
/// (CLoVE paper Sec. 5.1; exact construction of the official code:
/// shared/papers/clove-official-setup.md).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cflrun/data/dataset.hpp>

namespace cflrun::data {

/// The kinds of heterogeneity between clusters (command-line values of issues 2 and 4).
enum class PartitionKind {
  kLabelSkew1,    ///< "label_skew_1": cluster k holds classes {2k, 2k+1} only (K <= num_classes/2).
  kConceptShift,  ///< "concept_shift": all classes; cluster k permutes labels by two disjoint
                  ///< swaps.
  kFeatureSkew,   ///< "feature_skew": all classes; cluster k rotates images by k x 90 degrees (K <=
                  ///< 4).
  kLabelSkew2,    ///< "label_skew_2": U labels per cluster, any two share exactly V (exp201).
  kLabelSkew3,    ///< "label_skew_3": clusters 0..K-2 miss a class each, the last has all (exp202).
  kLabelSkew4,    ///< "label_skew_4": cluster k is dominated by class k (exp501).
  kRotation,  ///< "rotation": IFCA Sec. 6.2; all classes, K = 4 rotates by k x 90 degrees, K = 2 by
              ///< 0 and 180.
  kClassPerCluster,  ///< "class_per_cluster": cluster k holds class k only (the unsupervised rows
                     ///< 101/201/301).
};

/// The official dominant share of label skew 4: `dominance_percent` 66.6 divided by 100.0 in double
/// arithmetic, i.e. 0.6659999999999999, one ulp below 0.666 (so a group of 4 500 gives 2 996
/// dominant points, as the official CIFAR-10 runs got).
inline constexpr double kOfficialDominantShare = 66.6 / 100.0;

/// Parses a partition name. @throws ConfigError naming the accepted values otherwise.
PartitionKind parse_partition_kind(const std::string& name);

/// The names of every partition kind, in PartitionKind order ("label_skew_1", "concept_shift",
/// ...):
/// --partition's hard partitions (mixture_partition_names() has the mixtures).
std::vector<std::string> partition_names();

/// The command-line name of a partition kind, e.g. "label_skew_1".
std::string partition_name(PartitionKind kind);

/// The largest number of clusters K a partition kind allows on a dataset with `num_classes`
/// classes: label skew 1 num_classes / 2 (two classes per cluster), feature skew 4 (rotations by
/// 0, 90, 180, 270 degrees), concept shift the number of distinct permutations made of two
/// disjoint swaps, C(n,2) C(n-2,2) / 2 (630 for 10 classes); label skew 2 num_classes (Fisher's
/// inequality bounds sets pairwise sharing exactly V >= 1 labels; validate_partition_spec checks
/// the U, V-specific limits), label skew 3 num_classes + 1 (one missing class per cluster but the
/// last), label skew 4 num_classes (one dominant class per cluster).
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
  std::uint64_t data_seed =
      1;  ///< seed of the client split, and of the pools unless pool_seed (`--data-seed`).
  /// Seed of the cluster pools (which samples and labels each cluster holds: label sets, Dirichlet
  /// draws, class shuffles; `--pool-seed`); unset = data_seed. The official code draws the pools
  /// once per invocation with the first seed's state and varies only the client split by seed
  /// (clove-official-setup.md Sec. 0 step 4).
  std::optional<std::uint64_t> pool_seed;
  /// `--fidelity official`: build the data as the official CLoVE code does where it departs from
  /// the paper (clove-official-setup.md Sec. 0-6): test samples per client min(test pool //
  /// clients_per_cluster, train_samples) instead of test_samples; concept shift pools of at most
  /// 1 250 train / 200 test samples per class and cluster; CIFAR-10 feature skew as a random label
  /// permutation per cluster without rotation. (The CIFAR-10 class order is applied to the dataset
  /// by shuffle_class_order.)
  bool official_fidelity = false;

  /// The seed of the cluster pools in force: pool_seed if set, else data_seed.
  std::uint64_t effective_pool_seed() const { return pool_seed.value_or(data_seed); }

  // Label skew 2 and 3: the reserve + Dirichlet routine (official
  // partition_dataset_with_label_overlap and try_partition_until_min; clove-official-setup.md
  // Sec. 1-3). Defaults are the official values.

  /// U (label skew 2): distinct labels per cluster (official num_labels_per_cluster; paper U = 4).
  int labels_per_cluster = 4;
  /// V (label skew 2): labels any two clusters share, 0 <= V < U (official label_overlap_size;
  /// paper V = 2).
  int shared_labels = 2;
  /// Label skew 2: the clusters' label sets, given instead of drawn (`--label-sets`, e.g. the
  /// official code's draw for its seed 1); empty = drawn by label_skew_2_label_sets.
  std::vector<std::vector<std::int64_t>> label_sets;
  /// Label skew 2 and 3: the train pools' class counts, [K][num_classes], given instead of drawn
  /// by the reserve + Dirichlet routine (`--train-class-counts`, e.g. the official code's draw for
  /// its seed 1); empty = drawn.
  std::vector<std::vector<std::int64_t>> train_class_counts;
  /// Same for the test pools (`--test-class-counts`).
  std::vector<std::vector<std::int64_t>> test_class_counts;
  /// Concentration of the symmetric Dirichlet splitting a class among its holders (official beta).
  double dirichlet_alpha = 0.5;
  /// First reserve: fraction of each class split evenly among its holders (official reserve_frac).
  double reserve_start = 0.10;
  /// Reserve increment per retry until every cluster reaches its minimum; the last retry uses 1.0.
  double reserve_step = 0.05;
  /// Minimum training samples per cluster pool; unset = the official N_train (label skew 2: 5 100,
  /// label skew 3: 6 000). Never below clients_per_cluster x train_samples.
  std::optional<std::int64_t> min_cluster_train_samples;
  /// Minimum test samples per cluster pool; unset = the official N_test (label skew 2: 510,
  /// label skew 3: 750). Never below clients_per_cluster x test_samples.
  std::optional<std::int64_t> min_cluster_test_samples;

  /// Label skew 4 (official partition_dataset_dominance_based): fraction of a cluster's group from
  /// its dominant class, in [0, 1].
  double dominant_share = kOfficialDominantShare;

  // A changing population (issue 45, run/population/population_schedule.hpp).

  /// Whether the partition keeps its cluster pools for moved_shard (clients that change cluster);
  /// implied by new_distributions > 0 or extra_client_clusters.
  bool keep_cluster_pools = false;
  /// D: cluster distributions beyond the K initial ones that the population's changes introduce
  /// (clusters K, ..., K + D - 1); their pools are built with the others, from K + D clusters.
  int new_distributions = 0;
  /// The cluster (in [K, K + D)) of each client beyond the K x clients_per_cluster initial ones
  /// (the clients of an appearing cluster), in client order; their shards are moved_shard draws.
  std::vector<int> extra_client_clusters;
};

/// Everything that defines one client's local data, as indices into the dataset's splits plus
/// the cluster's transformation. Cheap to compute on every rank; materialise with `client_samples`.
struct ClientShard {
  int client = 0;        ///< client id in [0, M); clients are numbered cluster by cluster.
  int true_cluster = 0;  ///< ground-truth cluster in [0, K).
  std::vector<std::int64_t> train_indices;  ///< indices into the train split, without repetition.
  std::vector<std::int64_t> test_indices;   ///< indices into the test split, without repetition.
  int rotation_quarters = 0;  ///< counter-clockwise quarter turns applied to images (feature skew).
  std::vector<std::int64_t> label_map;  ///< [num_classes]: label y becomes label_map[y] (concept
                                        ///< shift); identity otherwise.
};

struct ClusterPool;

/// The whole partition: one shard per client, in client order.
struct Partition {
  PartitionSpec spec;
  std::vector<ClientShard> clients;  ///< [M] shards, client i at position i.
  /// The K + D cluster pools the shards were cut from, kept when the population changes
  /// (spec.keep_cluster_pools, new_distributions or extra_client_clusters; moved_shard draws from
  /// them), else empty.
  std::vector<std::shared_ptr<const ClusterPool>> pools;
  /// Ground-truth cluster of every client, [M].
  std::vector<int> true_clusters() const;
};

/// Checks a spec before any data is touched.
/// @throws ConfigError naming the flag if check_cluster_count fails (--clusters),
///         clients_per_cluster < 1 (--clients-per-cluster), train_samples < 1 (--train-samples)
///         or test_samples < 1 (--test-samples); naming the PartitionSpec field, for the kinds that
///         use it, if labels_per_cluster is outside [1, num_classes], shared_labels outside
///         [0, labels_per_cluster), clusters > num_classes / labels_per_cluster with
///         shared_labels == 0 (disjoint label sets), dirichlet_alpha <= 0, reserve_start outside
///         [0, 1], reserve_step <= 0, a set minimum < 0, or dominant_share outside [0, 1].
void validate_partition_spec(const PartitionSpec& spec, int num_classes);

/// Builds the partition deterministically from `spec.data_seed` and `spec.effective_pool_seed()`
/// (issue 2 item 3; issue 4).
/// Per cluster a pool of each split is formed (label skew 1: the whole of the cluster's two
/// classes; concept shift: a disjoint, equal share of every class; feature skew: the whole split,
/// rotated; label skew 2 and 3: every class split among the clusters holding it by the reserve +
/// Dirichlet routine; label skew 4: a dominant-class group per cluster); the pool is shuffled and
/// cut into clients_per_cluster disjoint chunks, and each client takes the first train_samples
/// (test_samples; official fidelity: min(chunk, train_samples)) points of its chunk, as the
/// official code does. Random streams: see PartitionStream in <cflrun/data/cluster_pools.hpp>.
/// @throws ConfigError as validate_partition_spec, i.e. if K or clients_per_cluster is not
///         positive, K exceeds what the kind allows (label skew 1: num_classes / 2; feature skew:
///         4), or a sample count is below 1; and as label_skew_2_label_sets if no label sets
///         with the asked U and V can be drawn for K clusters.
/// @throws DataError if a pool cannot give every client its samples without replacement (the
///         message gives the largest feasible --train-samples/--test-samples), or, for label
///         skew 2 and 3, if a cluster stays below its minimum even with the reserve at 1.0.
Partition make_partition(const PartitionSpec& spec, const ImageDataset& dataset);

/// The shard of `client` as a member of cluster `cluster` (a changing population, issue 45): its
/// native shard if `cluster` is the one it was cut for, else spec.train_samples and the test
/// samples (as make_partition gives a client of that cluster) drawn without replacement from the
/// cluster's pool by the (data seed, kPartition, client x (K + D) + cluster, kMovedClient*)
/// streams, with the cluster's rotation and label map. A moved client's samples may overlap those
/// of the cluster's own clients (the pool is shared, as in a real population).
/// @throws ConfigError if `partition` keeps no pools or `cluster` is not in [0, K + D).
/// @throws DataError if the pool holds fewer samples than a client takes.
ClientShard moved_shard(const Partition& partition, int client, int cluster);

/// A client's samples, ready for a model.
struct ClientSamples {
  torch::Tensor inputs;  ///< [n, C, H, W] float32 in [0, 1] (images, rotated as the shard says) or
                         ///< [n, d] (linreg).
  torch::Tensor
      targets;  ///< [n] int64 labels after the shard's label map, or [n] float32 values (linreg).
};

/// Materialises the train (`train == true`) or test samples of one shard from the dataset:
/// pixels / 255 as float32, rotated by `shard.rotation_quarters` counter-clockwise quarter turns
/// (torch::rot90 on dims (H, W), like PIL's rotate(90) in the official code), labels mapped through
/// `shard.label_map`. Both tensors are contiguous.
/// Every dataset is scaled by 1/255 (the official code feeds raw 0..255 CIFAR-10 pixels to its CNN,
/// whose first batch norm makes the scale irrelevant; its CIFAR autoencoder divides by 255 too).
/// @throws ShapeError if the split's images are not [N, C, H, W] uint8 or the label map does not
///         have dataset.num_classes entries.
ClientSamples client_samples(const ImageDataset& dataset, const ClientShard& shard, bool train);

}  // namespace cflrun::data
