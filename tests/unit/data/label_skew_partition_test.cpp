// Label skew 2, 3 and 4 (issue 4; clove-official-setup.md Sec. 1-4) and the promise that adding
// them left the existing partitions bit-identical.

#include <cflrun/data/partition.hpp>

#include "partition_spec_for_tests.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/data/cluster_pools.hpp>
#include <cflrun/data/dataset.hpp>
#include <cflrun/data/image_source.hpp>

namespace cflrun::data {
namespace {

constexpr int kClasses = 10;

/// Labels 0, 1, ..., 9, 0, 1, ... (n / 10 per class); partitions never read the images.
ImageSplit labels_only_split(std::int64_t n) {
  ImageSplit split;
  split.labels = torch::arange(n, torch::kInt64).remainder(kClasses);
  return split;
}

ImageDataset labels_only_dataset(std::int64_t train, std::int64_t test) {
  ImageDataset d;
  d.name = "synthetic";
  d.num_classes = kClasses;
  d.train = labels_only_split(train);
  d.test = labels_only_split(test);
  return d;
}

/// 300 train / 60 test samples per class.
const ImageDataset& synthetic() {
  static const ImageDataset data = labels_only_dataset(3000, 600);
  return data;
}

/// Real Fashion-MNIST, or nullptr where it is not installed.
const ImageDataset* fmnist() {
  static const std::optional<ImageDataset> data = []() -> std::optional<ImageDataset> {
    try {
      return load_image_dataset("fmnist", CFLRUN_FMNIST_DIR);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }();
  return data ? &*data : nullptr;
}

/// A label skew 2/3 spec for the small synthetic dataset: no official minimum (5 100 would not
/// fit).
PartitionSpec small_spec(PartitionKind kind, int clusters, std::uint64_t seed = 7) {
  PartitionSpec spec = spec_of(kind, clusters, 2, 10, 2, seed);
  spec.min_cluster_train_samples = 0;
  spec.min_cluster_test_samples = 0;
  return spec;
}

std::vector<std::int64_t> as_vector(const torch::Tensor& indices) {
  const torch::Tensor c = indices.to(torch::kInt64).contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

/// count[label] of the samples `indices` of a split.
std::map<std::int64_t, std::int64_t> class_counts(const ImageSplit& split,
                                                  const torch::Tensor& indices) {
  std::map<std::int64_t, std::int64_t> counts;
  for (const std::int64_t i : as_vector(split.labels.index_select(0, indices))) {
    ++counts[i];
  }
  return counts;
}

std::set<std::int64_t> classes_of(const ImageSplit& split, const torch::Tensor& indices) {
  std::set<std::int64_t> classes;
  for (const auto& [label, count] : class_counts(split, indices)) {
    classes.insert(label);
  }
  return classes;
}

/// Every index of one split's pools; fails if two pools share an index.
std::set<std::int64_t> disjoint_pools(const std::vector<ClusterPool>& pools, bool train) {
  std::set<std::int64_t> all;
  std::size_t total = 0;
  for (const ClusterPool& pool : pools) {
    const std::vector<std::int64_t> indices = as_vector(train ? pool.train : pool.test);
    all.insert(indices.begin(), indices.end());
    total += indices.size();
  }
  EXPECT_EQ(all.size(), total) << "an index is in two cluster pools";
  return all;
}

/// Checks that every pool of both splits holds exactly its label set's classes and that the pools
/// are disjoint.
void expect_support(const ImageDataset& data, const std::vector<ClusterPool>& pools,
                    const LabelSets& sets) {
  ASSERT_EQ(pools.size(), sets.size());
  for (std::size_t k = 0; k < pools.size(); ++k) {
    const std::set<std::int64_t> expected(sets[k].begin(), sets[k].end());
    EXPECT_EQ(classes_of(data.train, pools[k].train), expected) << "cluster " << k;
    EXPECT_EQ(classes_of(data.test, pools[k].test), expected) << "cluster " << k;
    EXPECT_EQ(pools[k].label_map, identity_label_map(kClasses));
    EXPECT_EQ(pools[k].rotation_quarters, 0);
  }
  disjoint_pools(pools, true);
  disjoint_pools(pools, false);
}

std::size_t shared(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  return common.size();
}

void expect_label_sets(const LabelSets& sets, int clusters, int u, int v) {
  ASSERT_EQ(sets.size(), static_cast<std::size_t>(clusters));
  for (std::size_t k = 0; k < sets.size(); ++k) {
    EXPECT_EQ(sets[k].size(), static_cast<std::size_t>(u));
    EXPECT_TRUE(std::is_sorted(sets[k].begin(), sets[k].end()));
    EXPECT_EQ(std::set<std::int64_t>(sets[k].begin(), sets[k].end()).size(), sets[k].size());
    for (std::size_t j = 0; j < k; ++j) {
      EXPECT_EQ(shared(sets[k], sets[j]), static_cast<std::size_t>(v)) << k << " vs " << j;
    }
  }
}

/// FNV-1a over every client's cluster, indices, label map and rotation.
std::uint64_t fingerprint(const Partition& partition) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto mix = [&hash](std::int64_t value) {
    hash ^= static_cast<std::uint64_t>(value);
    hash *= 1099511628211ULL;
  };
  for (const ClientShard& shard : partition.clients) {
    mix(shard.true_cluster);
    std::for_each(shard.train_indices.begin(), shard.train_indices.end(), mix);
    std::for_each(shard.test_indices.begin(), shard.test_indices.end(), mix);
    std::for_each(shard.label_map.begin(), shard.label_map.end(), mix);
    mix(shard.rotation_quarters);
  }
  return hash;
}

std::string config_error(const PartitionSpec& spec, const ImageDataset& data) {
  try {
    make_partition(spec, data);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

TEST(LabelSkewPartition, ExistingPartitionsAreBitIdentical) {
  // Recorded from the code before label skew 2-4 were added (data_seed 3; synthetic: LS1 5x5
  // 100/20, CS 4x5 150/30, FS 4x3 100/20; Fashion-MNIST: the same with 500/400 samples).
  struct Case {
    PartitionKind kind;
    int clusters;
    int cpc;
    std::int64_t train;
    std::int64_t test;
    std::uint64_t synthetic_hash;
    std::uint64_t fmnist_hash;
  };
  const Case cases[] = {
      {PartitionKind::kLabelSkew1, 5, 5, 100, 20, 15816741258642406099ULL, 13620106974844758959ULL},
      {PartitionKind::kConceptShift, 4, 5, 150, 30, 14192554494017005353ULL,
       16634942271629604867ULL},
      {PartitionKind::kFeatureSkew, 4, 3, 100, 20, 5793417417456063397ULL, 5832685128800799422ULL},
  };
  for (const Case& c : cases) {
    const Partition p =
        make_partition(spec_of(c.kind, c.clusters, c.cpc, c.train, c.test, 3), synthetic());
    EXPECT_EQ(fingerprint(p), c.synthetic_hash) << partition_name(c.kind);
  }
  const Partition ls1 =
      make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 100, 20, 3), synthetic());
  EXPECT_EQ(ls1.clients[0].train_indices[0], 1651);
  EXPECT_EQ(ls1.clients[0].train_indices[1], 1551);
  EXPECT_EQ(ls1.clients.back().test_indices.back(), 319);
  if (fmnist() == nullptr) {
    GTEST_SKIP() << "Fashion-MNIST not installed at " << CFLRUN_FMNIST_DIR;
  }
  for (const Case& c : cases) {
    const Partition p = make_partition(spec_of(c.kind, c.clusters, c.cpc, 500, 400, 3), *fmnist());
    EXPECT_EQ(fingerprint(p), c.fmnist_hash) << partition_name(c.kind);
  }
}

TEST(LabelSkewPartition, LabelSkew2SetsHoldULabelsAndShareExactlyV) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    expect_label_sets(label_skew_2_label_sets(5, kClasses, 4, 2, seed), 5, 4, 2);
  }
  // 7 is the most 4-sets of 10 classes pairwise sharing 2 (exhaustive search); 3-sets sharing 1:
  // also 7; disjoint pairs: 5.
  expect_label_sets(label_skew_2_label_sets(7, kClasses, 4, 2, 1), 7, 4, 2);
  expect_label_sets(label_skew_2_label_sets(7, kClasses, 3, 1, 1), 7, 3, 1);
  expect_label_sets(label_skew_2_label_sets(5, kClasses, 2, 0, 1), 5, 2, 0);
  expect_label_sets(label_skew_2_label_sets(1, kClasses, 10, 0, 1), 1, 10, 0);
  EXPECT_EQ(label_skew_2_label_sets(5, kClasses, 4, 2, 9),
            label_skew_2_label_sets(5, kClasses, 4, 2, 9));
  EXPECT_NE(label_skew_2_label_sets(5, kClasses, 4, 2, 1),
            label_skew_2_label_sets(5, kClasses, 4, 2, 2));
}

TEST(LabelSkewPartition, LabelSkew2PoolsHoldTheirLabelsAndDropUnheldClasses) {
  const PartitionSpec spec = small_spec(PartitionKind::kLabelSkew2, 5, 11);
  const LabelSets sets = label_skew_2_label_sets(5, kClasses, 4, 2, 11);
  const std::vector<ClusterPool> pools = cluster_pools(spec, synthetic());
  expect_support(synthetic(), pools, sets);
  // Every sample of a held class is used exactly once; classes nobody holds are dropped.
  std::set<std::int64_t> held;
  for (const auto& set : sets) {
    held.insert(set.begin(), set.end());
  }
  EXPECT_EQ(disjoint_pools(pools, true).size(), held.size() * 300U);
  EXPECT_EQ(disjoint_pools(pools, false).size(), held.size() * 60U);
  // The test split draws its own Dirichlet shares: some cluster's class counts differ (x 5).
  bool differs = false;
  for (const ClusterPool& pool : pools) {
    for (const auto& [label, count] : class_counts(synthetic().test, pool.test)) {
      differs = differs || class_counts(synthetic().train, pool.train)[label] != 5 * count;
    }
  }
  EXPECT_TRUE(differs);
}

TEST(LabelSkewPartition, LabelSkew3ClustersMissTheOfficialClasses) {
  const LabelSets expected = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8},     // all but 9
      {1, 2, 3, 4, 5, 6, 7, 8, 9},     // all but 0
      {0, 2, 3, 4, 5, 6, 7, 8, 9},     // all but 1
      {0, 1, 3, 4, 5, 6, 7, 8, 9},     // all but 2
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},  // all
  };
  EXPECT_EQ(label_skew_3_label_sets(5, kClasses), expected);
  const std::vector<ClusterPool> pools =
      cluster_pools(small_spec(PartitionKind::kLabelSkew3, 5), synthetic());
  expect_support(synthetic(), pools, expected);
  EXPECT_EQ(disjoint_pools(pools, true).size(), 3000U);  // every class is held
  EXPECT_EQ(disjoint_pools(pools, false).size(), 600U);
  // Other K: the first K - 1 clusters miss 9, 0, 1, ...; the last holds all classes.
  EXPECT_EQ(label_skew_3_label_sets(1, kClasses), LabelSets{expected[4]});
  EXPECT_EQ(label_skew_3_label_sets(2, kClasses), (LabelSets{expected[0], expected[4]}));
  const LabelSets eleven = label_skew_3_label_sets(11, kClasses);
  EXPECT_EQ(eleven[10], expected[4]);
  EXPECT_EQ(eleven[9], (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 9}));  // all but 8
}

TEST(LabelSkewPartition, ReserveOfOneSplitsEveryClassEvenly) {
  // Label skew 3 with the whole class reserved: classes 0, 1, 2, 9 have 4 holders (300 / 4 = 75
  // each), classes 3..8 have 5 (60 each). Clusters 0..3 miss one 4-holder class: 3 x 75 + 6 x 60
  // = 585; cluster 4: 4 x 75 + 6 x 60 = 660.
  ClassSplitSettings settings;
  settings.reserve_start = 1.0;
  const ClassSplit split = split_classes_among_clusters(
      synthetic().train.labels, kClasses, label_skew_3_label_sets(5, kClasses), settings, 7,
      PartitionStream::kClassSplitTrain);
  EXPECT_TRUE(split.met_minimum);
  EXPECT_EQ(split.reserve, 1.0);
  const std::vector<std::int64_t> sizes = {585, 585, 585, 585, 660};
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(split.pools[k].size(0), sizes[k]);
    for (const auto& [label, count] : class_counts(synthetic().train, split.pools[k])) {
      const bool four_holders = label <= 2 || label == 9;
      EXPECT_EQ(count, four_holders ? 75 : 60) << "cluster " << k << " class " << label;
    }
  }
}

TEST(LabelSkewPartition, ReserveIsCutEvenlyAndTheRestByDirichletShares) {
  // Reserve 0.5 of 300: 150 per class, array_split among H holders (4: 38, 38, 37, 37; 5: 30).
  ClassSplitSettings settings;
  settings.reserve_start = 0.5;
  const LabelSets sets = label_skew_3_label_sets(5, kClasses);
  for (const std::uint64_t seed : {1U, 2U, 3U}) {
    const ClassSplit split =
        split_classes_among_clusters(synthetic().train.labels, kClasses, sets, settings, seed,
                                     PartitionStream::kClassSplitTrain);
    EXPECT_EQ(split.reserve, 0.5);
    std::int64_t largest_share = 0;
    for (std::size_t k = 0; k < 5; ++k) {
      for (const auto& [label, count] : class_counts(synthetic().train, split.pools[k])) {
        const bool four_holders = label <= 2 || label == 9;
        EXPECT_GE(count, four_holders ? 37 : 30) << "cluster " << k << " class " << label;
        largest_share = std::max(largest_share, count);
      }
    }
    // Dirichlet(0.5) over 4-5 holders is skewed: some cluster gets far more than an even share.
    EXPECT_GT(largest_share, 100);
  }
}

TEST(LabelSkewPartition, ReserveGrowsUntilEveryClusterReachesTheMinimum) {
  const LabelSets sets = label_skew_3_label_sets(5, kClasses);
  ClassSplitSettings settings;
  settings.min_cluster_samples = 0;
  const ClassSplit first = split_classes_among_clusters(
      synthetic().train.labels, kClasses, sets, settings, 7, PartitionStream::kClassSplitTrain);
  EXPECT_EQ(first.reserve, 0.10);
  // 585 is the smallest pool of an even split (see above): with the Dirichlet part the first
  // attempts leave some cluster below it.
  settings.min_cluster_samples = 585;
  for (const std::uint64_t seed : {1U, 2U, 3U, 7U}) {
    const ClassSplit split =
        split_classes_among_clusters(synthetic().train.labels, kClasses, sets, settings, seed,
                                     PartitionStream::kClassSplitTrain);
    EXPECT_TRUE(split.met_minimum);
    EXPECT_GT(split.reserve, 0.10 + 1e-12) << "seed " << seed;
    for (const torch::Tensor& pool : split.pools) {
      EXPECT_GE(pool.size(0), 585);
    }
  }
  // Unreachable: 5 pools of at least 601 need 3 005 of the 3 000 samples.
  settings.min_cluster_samples = 601;
  const ClassSplit failed = split_classes_among_clusters(
      synthetic().train.labels, kClasses, sets, settings, 7, PartitionStream::kClassSplitTrain);
  EXPECT_FALSE(failed.met_minimum);
  EXPECT_EQ(failed.reserve, 1.0);
}

TEST(LabelSkewPartition, UnreachableMinimumThrowsDataErrorNamingTheFix) {
  PartitionSpec spec = small_spec(PartitionKind::kLabelSkew3, 5);
  spec.min_cluster_train_samples = 601;
  try {
    make_partition(spec, synthetic());
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(),
                 "label_skew_3: cluster 0 gets 585 training samples even with the reserve at 1 "
                 "(every class split evenly among the clusters holding it), but needs 601 (the "
                 "larger of the cluster minimum 601 and --clients-per-cluster x --train-samples = "
                 "20); lower --train-samples or --clients-per-cluster, or "
                 "PartitionSpec::min_cluster_train_samples");
  }
  // The clients' need raises the minimum: 5 x 121 = 605 > 3 000 / 5 cannot be met, 5 x 117 = 585
  // can.
  PartitionSpec clients = small_spec(PartitionKind::kLabelSkew3, 5);
  clients.clients_per_cluster = 5;
  clients.train_samples = 121;
  EXPECT_THROW(make_partition(clients, synthetic()), DataError);
  clients.train_samples = 117;  // 585: reachable
  const Partition partition = make_partition(clients, synthetic());
  EXPECT_EQ(partition.clients.size(), 25U);
  // The official minimum 5 100 / 6 000 does not fit 3 000 samples.
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kLabelSkew2, 5, 2, 10, 2), synthetic()),
               DataError);
}

TEST(LabelSkewPartition, ClientsDrawFromTheirClusterPool) {
  for (const PartitionKind kind :
       {PartitionKind::kLabelSkew2, PartitionKind::kLabelSkew3, PartitionKind::kLabelSkew4}) {
    PartitionSpec spec = small_spec(kind, 5, 5);
    spec.clients_per_cluster = 4;
    spec.train_samples = 50;
    spec.test_samples = 10;
    const std::vector<ClusterPool> pools = cluster_pools(spec, synthetic());
    const Partition partition = make_partition(spec, synthetic());
    ASSERT_EQ(partition.clients.size(), 20U);
    std::set<std::int64_t> all_train;
    for (const ClientShard& shard : partition.clients) {
      EXPECT_EQ(shard.true_cluster, shard.client / 4);
      ASSERT_EQ(shard.train_indices.size(), 50U);
      ASSERT_EQ(shard.test_indices.size(), 10U);
      const std::vector<std::int64_t> pool = as_vector(pools[shard.true_cluster].train);
      const std::set<std::int64_t> pool_set(pool.begin(), pool.end());
      for (const std::int64_t i : shard.train_indices) {
        EXPECT_EQ(pool_set.count(i), 1U) << partition_name(kind);
      }
      all_train.insert(shard.train_indices.begin(), shard.train_indices.end());
    }
    EXPECT_EQ(all_train.size(), 20U * 50U) << "clients share samples: " << partition_name(kind);
  }
}

TEST(LabelSkewPartition, SameSeedGivesIdenticalPartitionAndAnotherSeedDiffers) {
  for (const PartitionKind kind :
       {PartitionKind::kLabelSkew2, PartitionKind::kLabelSkew3, PartitionKind::kLabelSkew4}) {
    const PartitionSpec spec = small_spec(kind, 5, 5);
    PartitionSpec other = spec;
    other.data_seed = 6;
    const Partition a = make_partition(spec, synthetic());
    const Partition b = make_partition(spec, synthetic());
    const Partition c = make_partition(other, synthetic());
    EXPECT_EQ(fingerprint(a), fingerprint(b)) << partition_name(kind);
    EXPECT_NE(fingerprint(a), fingerprint(c)) << partition_name(kind);
    const std::vector<ClusterPool> pa = cluster_pools(spec, synthetic());
    const std::vector<ClusterPool> pc = cluster_pools(other, synthetic());
    for (std::size_t k = 0; k < pa.size(); ++k) {
      EXPECT_TRUE(pa[k].train.equal(cluster_pools(spec, synthetic())[k].train));
      EXPECT_FALSE(pa[k].train.equal(pc[k].train)) << partition_name(kind) << " cluster " << k;
    }
  }
}

TEST(LabelSkewPartition, LabelSkew4GivesTheDominantShares) {
  // 300 per class: G = 270, own = floor(0.666 x 270) = 179, others floor(91 / 9) = 10: 269.
  // Test 60 per class: G = 54, own = 35, others floor(19 / 9) = 2: 53.
  const std::vector<ClusterPool> pools =
      label_skew_4_pools(synthetic(), kClasses, kOfficialDominantShare, 7);
  for (std::size_t k = 0; k < pools.size(); ++k) {
    EXPECT_EQ(pools[k].train.size(0), 269);
    EXPECT_EQ(pools[k].test.size(0), 53);
    const auto train = class_counts(synthetic().train, pools[k].train);
    const auto test = class_counts(synthetic().test, pools[k].test);
    ASSERT_EQ(train.size(), 10U);
    ASSERT_EQ(test.size(), 10U);
    for (std::int64_t c = 0; c < kClasses; ++c) {
      const bool own = c == static_cast<std::int64_t>(k);
      EXPECT_EQ(train.at(c), own ? 179 : 10) << "cluster " << k << " class " << c;
      EXPECT_EQ(test.at(c), own ? 35 : 2) << "cluster " << k << " class " << c;
    }
  }
  EXPECT_EQ(disjoint_pools(pools, true).size(), 10U * 269U);
  EXPECT_EQ(disjoint_pools(pools, false).size(), 10U * 53U);
  // K < 10 keeps the first K clusters of the K = 10 construction.
  const std::vector<ClusterPool> five =
      label_skew_4_pools(synthetic(), 5, kOfficialDominantShare, 7);
  ASSERT_EQ(five.size(), 5U);
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_TRUE(five[k].train.equal(pools[k].train));
    EXPECT_TRUE(five[k].test.equal(pools[k].test));
  }
  // A share of one half: own 135, others floor(135 / 9) = 15.
  const auto half = label_skew_4_pools(synthetic(), 2, 0.5, 7);
  EXPECT_EQ(class_counts(synthetic().train, half[1].train).at(1), 135);
  EXPECT_EQ(class_counts(synthetic().train, half[1].train).at(0), 15);
}

TEST(LabelSkewPartition, LabelSkew4OfficialShareRoundsLikeTheOfficialCode) {
  // 66.6 / 100.0 is one ulp below 0.666: a group of 4 500 (5 000 per class) gives 2 996 dominant
  // points, as the official CIFAR-10 runs (clove-official-setup.md Sec. 4); 0.666 would give 2 997.
  EXPECT_LT(kOfficialDominantShare, 0.666);
  const ImageDataset cifar_sized = labels_only_dataset(50000, 10000);
  const auto pools = label_skew_4_pools(cifar_sized, 1, kOfficialDominantShare, 1);
  const auto train = class_counts(cifar_sized.train, pools[0].train);
  EXPECT_EQ(train.at(0), 2996);
  EXPECT_EQ(train.at(9), 167);  // floor(1 504 / 9)
  const auto test = class_counts(cifar_sized.test, pools[0].test);
  EXPECT_EQ(test.at(0), 599);  // G = 900
  EXPECT_EQ(test.at(5), 33);
}

TEST(LabelSkewPartition, BadSettingsThrowConfigError) {
  const ImageDataset& d = synthetic();
  EXPECT_EQ(config_error(small_spec(PartitionKind::kLabelSkew2, 11), d),
            "--clusters must be between 1 and 10 for --partition label_skew_2 (Fisher's "
            "inequality: at most 10 label sets pairwise share the same number of labels), but "
            "got 11");
  EXPECT_EQ(config_error(small_spec(PartitionKind::kLabelSkew2, 8), d),
            "--partition label_skew_2 could not draw 8 label sets of U = 4 out of 10 classes with "
            "every two sharing exactly V = 2 labels (100 restarts of 10000 draws per cluster); "
            "lower --clusters (the paper uses 5)");
  PartitionSpec spec = small_spec(PartitionKind::kLabelSkew2, 5);
  spec.labels_per_cluster = 11;
  EXPECT_EQ(config_error(spec, d),
            "PartitionSpec::labels_per_cluster (U) must be between 1 and 10 (the number of "
            "classes), but got 11");
  spec.labels_per_cluster = 4;
  spec.shared_labels = 4;
  EXPECT_EQ(config_error(spec, d),
            "PartitionSpec::shared_labels (V) must be between 0 and U - 1 = 3, but got 4");
  spec.shared_labels = 0;
  spec.clusters = 3;
  EXPECT_EQ(config_error(spec, d),
            "--clusters must be at most 2 for --partition label_skew_2 with disjoint label sets "
            "(V = 0) of 4 out of 10 classes, but got 3");
  PartitionSpec split = small_spec(PartitionKind::kLabelSkew3, 5);
  split.dirichlet_alpha = 0.0;
  EXPECT_EQ(config_error(split, d), "PartitionSpec::dirichlet_alpha must be positive, but got 0");
  split.dirichlet_alpha = 0.5;
  split.reserve_start = 1.5;
  EXPECT_EQ(config_error(split, d), "PartitionSpec::reserve_start must be in [0, 1], but got 1.5");
  split.reserve_start = 0.1;
  split.reserve_step = -0.05;
  EXPECT_EQ(config_error(split, d), "PartitionSpec::reserve_step must be positive, but got -0.05");
  split.reserve_step = 0.05;
  split.min_cluster_test_samples = -1;
  EXPECT_EQ(config_error(split, d),
            "PartitionSpec::min_cluster_test_samples must be at least 0, but got -1");
  EXPECT_EQ(config_error(small_spec(PartitionKind::kLabelSkew3, 12), d),
            "--clusters must be between 1 and 11 for --partition label_skew_3 (one missing class "
            "per cluster out of 10, plus one cluster with all), but got 12");
  EXPECT_EQ(config_error(small_spec(PartitionKind::kLabelSkew4, 11), d),
            "--clusters must be between 1 and 10 for --partition label_skew_4 (one dominant class "
            "per cluster out of 10), but got 11");
  PartitionSpec dominant = small_spec(PartitionKind::kLabelSkew4, 5);
  dominant.dominant_share = 1.25;
  EXPECT_EQ(config_error(dominant, d),
            "PartitionSpec::dominant_share must be in [0, 1], but got 1.25");
  EXPECT_THROW(label_skew_4_pools(d, 0, 0.5, 1), ConfigError);
  EXPECT_THROW(label_skew_3_label_sets(0, kClasses), ConfigError);
  const LabelSets outside = {std::vector<std::int64_t>{3, 10}};
  EXPECT_THROW(split_classes_among_clusters(d.train.labels, kClasses, outside, {}, 1,
                                            PartitionStream::kClassSplitTrain),
               ConfigError);
}

TEST(LabelSkewPartition, LabelSkew4MissingClassThrowsDataError) {
  ImageDataset gap = labels_only_dataset(3000, 600);
  gap.test.labels.masked_fill_(gap.test.labels.eq(4), 3);
  EXPECT_THROW(label_skew_4_pools(gap, 5, kOfficialDominantShare, 1), DataError);
}

TEST(LabelSkewPartition, RealFashionMnistGivesTheOfficialSizes) {
  if (fmnist() == nullptr) {
    GTEST_SKIP() << "Fashion-MNIST not installed at " << CFLRUN_FMNIST_DIR;
  }
  const ImageDataset& data = *fmnist();
  // Label skew 4, row 1520: 10 clusters; train G = 5 400: 3 596 + 9 x 200 = 5 396; test G = 900:
  // 599 + 9 x 33 = 896, i.e. 179 test samples for each of 5 clients.
  const PartitionSpec ls4 = spec_of(PartitionKind::kLabelSkew4, 10, 5, 500, 179, 1);
  const std::vector<ClusterPool> pools4 = cluster_pools(ls4, data);
  for (std::size_t k = 0; k < 10; ++k) {
    EXPECT_EQ(pools4[k].train.size(0), 5396);
    EXPECT_EQ(pools4[k].test.size(0), 896);
    EXPECT_EQ(class_counts(data.train, pools4[k].train).at(static_cast<std::int64_t>(k)), 3596);
    EXPECT_EQ(class_counts(data.train, pools4[k].train).at((k + 1) % 10), 200);
    EXPECT_EQ(class_counts(data.test, pools4[k].test).at(static_cast<std::int64_t>(k)), 599);
    EXPECT_EQ(class_counts(data.test, pools4[k].test).at((k + 1) % 10), 33);
  }
  EXPECT_EQ(make_partition(ls4, data).clients.size(), 50U);
  PartitionSpec too_many = ls4;
  too_many.test_samples = 180;
  EXPECT_THROW(make_partition(too_many, data), DataError);

  // Label skew 2, row 1320: 5 clusters of 4 labels sharing 2; pools of at least 5 100 / 510.
  const PartitionSpec ls2 = spec_of(PartitionKind::kLabelSkew2, 5, 5, 500, 100, 1);
  const LabelSets sets2 = label_skew_2_label_sets(5, kClasses, 4, 2, 1);
  expect_label_sets(sets2, 5, 4, 2);
  const std::vector<ClusterPool> pools2 = cluster_pools(ls2, data);
  expect_support(data, pools2, sets2);
  for (const ClusterPool& pool : pools2) {
    EXPECT_GE(pool.train.size(0), 5100);
    EXPECT_GE(pool.test.size(0), 510);
  }
  EXPECT_EQ(make_partition(ls2, data).clients.size(), 25U);

  // Label skew 3, row 1120: the fixed sets; pools of at least 6 000 / 750.
  const PartitionSpec ls3 = spec_of(PartitionKind::kLabelSkew3, 5, 5, 500, 100, 1);
  const std::vector<ClusterPool> pools3 = cluster_pools(ls3, data);
  expect_support(data, pools3, label_skew_3_label_sets(5, kClasses));
  for (const ClusterPool& pool : pools3) {
    EXPECT_GE(pool.train.size(0), 6000);
    EXPECT_GE(pool.test.size(0), 750);
  }
  EXPECT_EQ(disjoint_pools(pools3, true).size(), 60000U);
  EXPECT_EQ(disjoint_pools(pools3, false).size(), 10000U);
}

}  // namespace
}  // namespace cflrun::data
