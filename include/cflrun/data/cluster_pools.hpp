#pragma once
/// @file
/// The building blocks of `make_partition`: one data pool per ground-truth cluster (step 2 of the
/// official pipeline, shared/papers/clove-official-setup.md Sec. 0) and the split of a pool among
/// the cluster's clients (step 3, the official `assign_data_to_clients_RR_without_replacement`).

#include <cstdint>
#include <string>
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
  kClientSplitTrain = 0,      ///< shuffle of cluster a's train pool before it is cut into clients.
  kClientSplitTest = 1,       ///< same for the test pool.
  kClassShuffleTrain = 2,     ///< concept shift: shuffle of class a's train indices among clusters.
  kClassShuffleTest = 3,      ///< same for the test indices.
  kClassSplitTrain = 4,       ///< label skew 2, 3: reserve + Dirichlet on train; index = retry.
  kClassSplitTest = 5,        ///< same on the test split (its own shuffles and Dirichlet draws).
  kLabelAssignment = 6,       ///< label skew 2: std::mt19937_64 drawing the label sets; index 0.
  kDominantShuffleTrain = 7,  ///< label skew 4: shuffle of class a's train indices.
  kDominantShuffleTest = 8,   ///< same for the test indices.
  kLabelPermutation = 9,      ///< official CIFAR-10 feature skew: cluster a's label permutation.
  kClassOrder = 10,           ///< official CIFAR-10 class order (shuffle_class_order); index 0.
  kMovedClientTrain = 11,     ///< moved_shard: a moved client's train draw; index client x
                              ///< (K + D) + cluster.
  kMovedClientTest = 12,      ///< same for its test draw.
};

/// The LibTorch generator of one partition stream:
/// make_torch_generator(data_seed, Purpose::kPartition, index, stream).
/// @param index  the cluster (client split) or the class (class shuffle).
at::Generator partition_generator(std::uint64_t data_seed, PartitionStream stream,
                                  std::uint64_t index);

/// The identity label map [0, 1, ..., num_classes - 1].
std::vector<std::int64_t> identity_label_map(int num_classes);

/// Cluster pools of any kind; dispatches to the functions below.
/// @throws ConfigError if spec.clusters is outside [1, max_clusters(spec.kind, num_classes)], or
///         as label_skew_2_label_sets.
/// @throws DataError from concept_shift_label_maps, class_split_pools or label_skew_4_pools.
std::vector<ClusterPool> cluster_pools(const PartitionSpec& spec, const ImageDataset& dataset);

/// Label skew 1 (paper Sec. 5.1, official exp203): cluster k holds ALL samples of classes
/// {2k, 2k+1} of each split (FMNIST: 12 000 train / 2 000 test); identity labels, no rotation.
/// @throws ConfigError if clusters is outside [1, num_classes / 2].
std::vector<ClusterPool> label_skew_1_pools(const ImageDataset& dataset, int clusters);

/// One class per cluster (the official `no_mixture` mode of the unsupervised rows 101/201/301,
/// clove-official-setup.md Sec. 7): cluster k holds ALL samples of class k of each split.
/// @throws ConfigError if clusters is outside [1, num_classes].
std::vector<ClusterPool> class_per_cluster_pools(const ImageDataset& dataset, int clusters);

/// Caps on the samples of one class a concept-shift cluster takes from each split (0 = no cap).
struct ClassShare {
  std::int64_t max_train = 0;  ///< train samples per class and cluster at most.
  std::int64_t max_test = 0;   ///< test samples per class and cluster at most.
};

/// The official concept-shift share (exp111): 1 250 train and 200 test samples per class and
/// cluster.
ClassShare official_concept_shift_share();

/// Concept shift (paper Sec. 5.1, official exp111): every class of each split is shuffled
/// (stream kClassShuffleTrain/Test, index = class) and cut into `clusters` equal disjoint parts of
/// floor(count / K) samples, each then cut to its first `share.max_*` samples if set; cluster k's
/// pool is the union of part k of every class, ordered by class. Labels are permuted by
/// concept_shift_label_maps.
/// The official code draws exactly 1 250 train / 200 test samples per class and cluster
/// (official_concept_shift_share, used under --fidelity official); by default we take the whole
/// disjoint share count / K (FMNIST, K = 4: 1 500 / 250), which has the same distribution and
/// only matters if a client asks for more than the official pool holds.
/// @throws ConfigError if clusters is outside [1, max_clusters(kConceptShift, num_classes)].
/// @throws DataError as concept_shift_label_maps.
std::vector<ClusterPool> concept_shift_pools(const ImageDataset& dataset, int clusters,
                                             std::uint64_t data_seed, ClassShare share = {});

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

/// The official CIFAR-10 "feature skew" (clove-official-setup.md Sec. 5): the official code never
/// applies its rotation transform to CIFAR-10 and draws a new random class order for every
/// cluster's reload, so every cluster holds the WHOLE split, unrotated, with its own uniformly
/// random label permutation (std::mt19937_64 make_engine(pool_seed, kPartition, k,
/// kLabelPermutation), core::shuffle_prefix of all classes): effectively a concept shift.
/// @throws ConfigError if clusters is outside [1, 4].
std::vector<ClusterPool> label_permutation_pools(const ImageDataset& dataset, int clusters,
                                                 std::uint64_t pool_seed);

/// A uniformly random permutation of [0, num_classes) from make_engine(seed, kPartition, index,
/// stream) (core::shuffle_prefix of all of it; portable).
std::vector<std::int64_t> random_class_permutation(int num_classes, std::uint64_t seed,
                                                   PartitionStream stream, std::uint64_t index);

/// The official CIFAR-10 class order (clove-official-setup.md Sec. 0 step 1): the official code
/// takes the 10 classes in a random order and relabels them 0..9 by it. Replaces every label y of
/// both splits by order[y], order = random_class_permutation(num_classes, pool_seed,
/// kClassOrder, 0). Used under --fidelity official for CIFAR-10 only.
/// @throws ShapeError if a split's labels are not [N] int64.
void shuffle_class_order(ImageDataset& dataset, std::uint64_t pool_seed);

/// IFCA's rotated datasets (IFCA Sec. 6.2; baselines-official-setup.md 3.1): like feature skew,
/// every cluster draws its own permutation of the WHOLE split (so clients within a cluster hold
/// disjoint data), and cluster j is rotated by j quarter turns for K = 4 (rotated MNIST) or by
/// 2 (j mod 2) quarter turns for K = 2 (0 and 180 degrees, rotated CIFAR-10); K = 1 is unrotated.
/// @throws ConfigError if clusters is not 1, 2 or 4.
std::vector<ClusterPool> rotation_pools(const ImageDataset& dataset, int clusters);

/// Per-cluster label sets: [K] lists of class indices, ascending (label skew 2 and 3).
using LabelSets = std::vector<std::vector<std::int64_t>>;

/// The official minimum pool size of a cluster (`N_train` / `N_test` of the official exp dict):
/// label skew 2 (exp201) 5 100 train / 510 test, label skew 3 (exp202) 6 000 / 750; 0 otherwise.
std::int64_t official_min_cluster_samples(PartitionKind kind, bool train);

/// The minimum pool size the reserve + Dirichlet routine must reach for one split:
/// max(spec.min_cluster_{train,test}_samples or the official minimum,
///     clients_per_cluster x {train,test}_samples).
/// The second term is ours: where the official code would hand clients fewer samples than asked
/// (test per client = min(pool // cpc, dppc)), we raise the reserve further instead; where the
/// official minimum suffices, the result is the same. Under spec.official_fidelity the test
/// minimum is the official one alone (test sizes then follow the pools).
std::int64_t min_cluster_samples(const PartitionSpec& spec, bool train);

/// How the reserve + Dirichlet routine splits a class among the clusters holding it.
struct ClassSplitSettings {
  double dirichlet_alpha = 0.5;          ///< symmetric Dirichlet concentration (official beta).
  double reserve_start = 0.10;           ///< first reserve fraction (official reserve_frac).
  double reserve_step = 0.05;            ///< reserve increment per retry; the last retry is 1.0.
  std::int64_t min_cluster_samples = 0;  ///< every cluster's pool must hold at least this many.
};

/// The routine's settings for one split of `spec`: its alpha and reserve fields, and
/// min_cluster_samples(spec, train).
/// @throws ConfigError if the spec sets a negative min_cluster_{train,test}_samples.
ClassSplitSettings class_split_settings(const PartitionSpec& spec, bool train);

/// @throws ConfigError naming the PartitionSpec field if dirichlet_alpha <= 0, reserve_start is
///         outside [0, 1], reserve_step <= 0 or min_cluster_samples < 0.
void check_class_split_settings(const ClassSplitSettings& settings);

/// The outcome of the reserve + Dirichlet routine on one split.
struct ClassSplit {
  std::vector<torch::Tensor> pools;  ///< [K] pools, each [n_k] int64 indices into the split.
  double reserve = 0.0;              ///< the reserve fraction of the accepted (or last) attempt.
  bool met_minimum = false;          ///< whether every pool reached settings.min_cluster_samples.
};

/// The reserve + Dirichlet routine on one split (official partition_dataset_with_label_overlap
/// inside try_partition_until_min; clove-official-setup.md Sec. 1). Attempt i uses the reserve
/// r = min(1, reserve_start + i x reserve_step) and the generator
/// partition_generator(data_seed, stream, i). For every class c held by H >= 1 clusters
/// (ascending cluster order), its indices are shuffled (torch::randperm); the first
/// R = floor(count x r) form the reserve, cut evenly among the holders as numpy.array_split does
/// (the first R % H holders get one more); the rest are cut at floor(cumsum(p) x rest) for
/// p ~ Dirichlet(alpha, ..., alpha) (torch::_sample_dirichlet, float64). Classes held by nobody are
/// dropped. Attempts stop at the first whose every pool holds >= min_cluster_samples, else after
/// r = 1 (every class split evenly, no randomness in the sizes).
/// The official loop accumulates r += 0.05 in floating point, so its last attempt is 0.95 (the
/// sums reach 0.9500000000000003, then 1.0000000000000002 > 1.0); we also try 1.0, as its
/// max_reserve_pct = 1.0 intends. Each attempt redraws everything, as the official code does.
/// @param labels      [N] int64 labels of the split.
/// @param label_sets  [K] class lists, each class in [0, num_classes).
/// @return            the pools, the reserve used and whether the minimum was met (not an error
///                    here: the caller names the flags in its DataError).
/// @throws ConfigError if a label set holds a class outside [0, num_classes) or the settings are
///         out of range (alpha <= 0, reserve_start outside [0, 1], reserve_step <= 0).
ClassSplit split_classes_among_clusters(const torch::Tensor& labels, int num_classes,
                                        const LabelSets& label_sets,
                                        const ClassSplitSettings& settings, std::uint64_t data_seed,
                                        PartitionStream stream);

/// Cluster pools of both splits from label sets by split_classes_among_clusters, each split with
/// its own draws (streams kClassSplitTrain / kClassSplitTest) and its own minimum
/// (min_cluster_samples); a split whose spec.{train,test}_class_counts are given is cut by
/// split_classes_by_counts instead. Identity labels, no rotation.
/// @throws DataError naming partition_name(spec.kind), the cluster, its size with the reserve at
///         1.0 (or by the given counts), the minimum and the fix, if a split does not meet its
///         minimum; ConfigError as split_classes_by_counts.
std::vector<ClusterPool> class_split_pools(const PartitionSpec& spec, const ImageDataset& dataset,
                                           const LabelSets& label_sets);

/// Class counts of the cluster pools of one split: [K][num_classes], entry [k][c] = samples of
/// class c in cluster k's pool.
using ClassCounts = std::vector<std::vector<std::int64_t>>;

/// Parses `--train-class-counts` / `--test-class-counts`: clusters separated by '/', the
/// num_classes counts of a cluster by ',', e.g. "0,0,812,0,4920,0,160,0,0,1513/...".
/// @param option  the flag without dashes, for the message.
/// @throws ConfigError naming the flag for a word that is not an integer, an empty row, a count
///         of rows other than `clusters`, a row of other than num_classes counts, or a negative
///         count.
ClassCounts parse_class_counts(const std::string& text, const std::string& option, int clusters,
                               int num_classes);

/// Cluster pools of one split with the given class counts instead of the reserve + Dirichlet
/// draw (e.g. the official code's draw for its seed 1, whose NumPy Dirichlet and shuffle sequence
/// cflrun does not replay): the indices of every class are shuffled (torch::randperm on
/// partition_generator(pool_seed, stream, 0)) and cut into consecutive parts of counts[k][c]
/// samples, clusters in order, so the pools are disjoint.
/// @param labels  [N] int64 labels of the split.
/// @param option  the flag without dashes, for the messages.
/// @return        [K] pools, each [sum_c counts[k][c]] int64 indices into the split.
/// @throws ConfigError naming the flag if the counts have a row count other than
///         label_sets.size(), give a cluster samples of a class its label set does not hold, or
///         take more samples of a class than the split has.
std::vector<torch::Tensor> split_classes_by_counts(const torch::Tensor& labels, int num_classes,
                                                   const LabelSets& label_sets,
                                                   const ClassCounts& counts,
                                                   std::uint64_t pool_seed, PartitionStream stream,
                                                   const std::string& option);

/// Label skew 2 label sets (official generate_label_assignments, exp201): cluster by cluster, U
/// distinct labels are drawn uniformly (partial Fisher-Yates with core::uniform_index on
/// make_engine(data_seed, Purpose::kPartition, 0, kLabelAssignment)) and accepted only if they
/// share exactly V labels with every earlier cluster (rejection sampling, as the official code).
/// The official greedy pass can dead-end (about 1 pass in 100 for K = 5, U = 4, V = 2 on 10
/// classes, by simulation) and then spins forever; we give each cluster at most 10 000 draws and
/// otherwise restart from cluster 0, at most 100 times. (The official README says "2 classes per
/// client, at least 1 shared": it differs; the paper's U = 4, V = 2 for images matches the code.)
/// @return [clusters] ascending class lists of labels_per_cluster classes each.
/// @throws ConfigError naming --clusters if no such label sets were found (e.g. 10 classes,
///         U = 4, V = 2 allow at most 7 clusters), or if the settings are out of range as in
///         validate_partition_spec.
LabelSets label_skew_2_label_sets(int clusters, int num_classes, int labels_per_cluster,
                                  int shared_labels, std::uint64_t data_seed);

/// Checks U and V of label skew 2 before drawing.
/// @throws ConfigError naming the PartitionSpec field if labels_per_cluster is outside
///         [1, num_classes] or shared_labels outside [0, labels_per_cluster); naming --clusters if
///         shared_labels == 0 (disjoint sets) and clusters > num_classes / labels_per_cluster.
void check_label_skew_2_settings(int clusters, int num_classes, int labels_per_cluster,
                                 int shared_labels);

/// Label skew 3 label sets (official exp202, App. C.1.2): cluster k < K - 1 holds every class but
/// (k - 1) mod num_classes, i.e. cluster 0 all but 9, 1 all but 0, 2 all but 1, 3 all but 2; the
/// last cluster holds all classes. K = 5 is the official setting; other K follow the same rule
/// (our generalisation), up to num_classes + 1.
/// @throws ConfigError if clusters is outside [1, num_classes + 1].
LabelSets label_skew_3_label_sets(int clusters, int num_classes);

/// Parses `--label-sets`: clusters separated by '/', labels by ',', e.g. "2,4,6,9/0,2,3,4".
/// @throws ConfigError naming --label-sets for an empty set, a word that is not a label in
///         [0, num_classes), a label twice in one set, or a count of sets other than `clusters`.
LabelSets parse_label_sets(const std::string& text, int clusters, int num_classes);

/// Label skew 2 (paper Sec. 5.1; official exp201): spec.label_sets if given, else
/// label_skew_2_label_sets, then class_split_pools. The test split draws its own Dirichlet
/// proportions, so a cluster's test class mix differs from its train mix over the same classes (the
/// paper says train and test of a client have the same distribution: differs).
/// @throws ConfigError, DataError as label_skew_2_label_sets and class_split_pools.
std::vector<ClusterPool> label_skew_2_pools(const PartitionSpec& spec, const ImageDataset& dataset);

/// Label skew 3 (App. C.1.2; official exp202): label_skew_3_label_sets, then class_split_pools
/// (classes 0, 1, 2, 9 have 4 holders, 3..8 have 5 when K = 5).
/// @throws ConfigError, DataError as label_skew_3_label_sets and class_split_pools.
std::vector<ClusterPool> label_skew_3_pools(const PartitionSpec& spec, const ImageDataset& dataset);

/// @throws ConfigError naming PartitionSpec::dominant_share if it is outside [0, 1].
void check_dominant_share(double dominant_share);

/// Label skew 4 (official exp501, partition_dataset_dominance_based), per split: the indices of
/// every class are shuffled (stream kDominantShuffleTrain/Test, index = class); group size
/// G = floor(0.9 x smallest class count); cluster k takes floor(dominant_share x G) points of class
/// k and floor((G - that) / (num_classes - 1)) points of each other class, clusters in order, all
/// without replacement. FMNIST: 3 596 + 9 x 200 = 5 396 train, 599 + 9 x 33 = 896 test per cluster.
/// The official code makes 10 clusters, uses no Dirichlet and spreads the last third over the 9
/// other classes (App. C.1.2 says 5 clusters, Dirichlet(0.5), a third uniform over all classes:
/// differs). K < num_classes keeps the first K clusters of the K = num_classes construction (others
/// are still all num_classes - 1 classes): our generalisation.
/// @throws ConfigError if clusters is outside [1, num_classes] or dominant_share outside [0, 1].
/// @throws DataError if a class of a split has no sample.
std::vector<ClusterPool> label_skew_4_pools(const ImageDataset& dataset, int clusters,
                                            double dominant_share, std::uint64_t data_seed);

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
