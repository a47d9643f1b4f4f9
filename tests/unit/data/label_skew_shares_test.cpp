// Label skew partitions: clients drawn from their cluster's pool, seeds, label skew 4's dominant
// shares, bad settings, and the official sizes on real Fashion-MNIST (clove-official-setup.md
// Sec. 1-4).
#include "label_skew_helpers.hpp"

#include <gtest/gtest.h>

namespace cflrun::data {
namespace {

using namespace label_skew_testing;

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

TEST(LabelSkewPartitionOnThisMachine, RealFashionMnistGivesTheOfficialSizes) {
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
