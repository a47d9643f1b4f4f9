#include <cflrun/data/partition.hpp>

#include "partition_spec_for_tests.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
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
constexpr std::int64_t kTrainSize = 3000;  // 300 per class
constexpr std::int64_t kTestSize = 600;    // 60 per class
constexpr std::int64_t kTrainMarker = 1;   // pixel (0, 2) tells the split of an image
constexpr std::int64_t kTestMarker = 2;

/// A split whose image i stores i in pixels (0, 0) (low byte) and (0, 1) (high byte) and the split
/// marker in pixel (0, 2); label i % 10.
ImageSplit synthetic_split(std::int64_t n, std::int64_t marker) {
  ImageSplit split;
  split.images = torch::zeros({n, 1, 28, 28}, torch::kUInt8);
  auto pixels = split.images.accessor<std::uint8_t, 4>();
  for (std::int64_t i = 0; i < n; ++i) {
    pixels[i][0][0][0] = static_cast<std::uint8_t>(i % 256);
    pixels[i][0][0][1] = static_cast<std::uint8_t>(i / 256);
    pixels[i][0][0][2] = static_cast<std::uint8_t>(marker);
  }
  split.labels = torch::arange(n, torch::kInt64).remainder(kClasses);
  return split;
}

ImageDataset synthetic_dataset() {
  ImageDataset dataset;
  dataset.name = "synthetic";
  dataset.num_classes = kClasses;
  dataset.train = synthetic_split(kTrainSize, kTrainMarker);
  dataset.test = synthetic_split(kTestSize, kTestMarker);
  return dataset;
}

const ImageDataset& dataset() {
  static const ImageDataset data = synthetic_dataset();
  return data;
}

/// The set of labels of the samples `idx` (a vector or set of indices) of a split.
template <typename Indices>
std::set<std::int64_t> labels_of(const ImageSplit& split, const Indices& idx) {
  std::set<std::int64_t> labels;
  for (const std::int64_t i : idx) {
    labels.insert(split.labels[i].item<std::int64_t>());
  }
  return labels;
}

/// All train (or test) indices of the given clients; fails if one appears twice.
std::set<std::int64_t> disjoint_union(const std::vector<ClientShard>& shards, bool train) {
  std::set<std::int64_t> all;
  std::size_t total = 0;
  for (const ClientShard& shard : shards) {
    const auto& idx = train ? shard.train_indices : shard.test_indices;
    all.insert(idx.begin(), idx.end());
    total += idx.size();
  }
  EXPECT_EQ(all.size(), total) << "an index is shared by two clients";
  return all;
}

std::vector<ClientShard> cluster_clients(const Partition& partition, int k) {
  std::vector<ClientShard> shards;
  for (const ClientShard& shard : partition.clients) {
    if (shard.true_cluster == k) {
      shards.push_back(shard);
    }
  }
  return shards;
}

/// The sample indices and split markers stored in the pixels of unrotated images [n, 1, 28, 28].
std::vector<std::int64_t> decode_indices(const torch::Tensor& inputs, std::int64_t marker) {
  const torch::Tensor pixels = inputs.mul(255).round().to(torch::kInt64);
  EXPECT_TRUE(pixels.select(3, 2).select(2, 0).select(1, 0).eq(marker).all().item<bool>());
  const torch::Tensor index = pixels.select(3, 0).select(2, 0).select(1, 0) +
                              256 * pixels.select(3, 1).select(2, 0).select(1, 0);
  return std::vector<std::int64_t>(index.data_ptr<std::int64_t>(),
                                   index.data_ptr<std::int64_t>() + index.numel());
}

void expect_sizes(const Partition& partition, const PartitionSpec& spec) {
  ASSERT_EQ(partition.clients.size(),
            static_cast<std::size_t>(spec.clusters * spec.clients_per_cluster));
  for (std::size_t i = 0; i < partition.clients.size(); ++i) {
    const ClientShard& shard = partition.clients[i];
    EXPECT_EQ(shard.client, static_cast<int>(i));
    EXPECT_EQ(shard.true_cluster, static_cast<int>(i) / spec.clients_per_cluster);
    EXPECT_EQ(static_cast<std::int64_t>(shard.train_indices.size()), spec.train_samples);
    EXPECT_EQ(static_cast<std::int64_t>(shard.test_indices.size()), spec.test_samples);
  }
}

TEST(Partition, ParsesAndNamesEveryKind) {
  for (const PartitionKind kind :
       {PartitionKind::kLabelSkew1, PartitionKind::kConceptShift, PartitionKind::kFeatureSkew,
        PartitionKind::kLabelSkew2, PartitionKind::kLabelSkew3, PartitionKind::kLabelSkew4,
        PartitionKind::kRotation, PartitionKind::kClassPerCluster}) {
    EXPECT_EQ(parse_partition_kind(partition_name(kind)), kind);
  }
  EXPECT_EQ(partition_name(PartitionKind::kLabelSkew1), "label_skew_1");
  EXPECT_EQ(partition_name(PartitionKind::kConceptShift), "concept_shift");
  EXPECT_EQ(partition_name(PartitionKind::kFeatureSkew), "feature_skew");
  EXPECT_EQ(partition_name(PartitionKind::kLabelSkew2), "label_skew_2");
  EXPECT_EQ(partition_name(PartitionKind::kLabelSkew3), "label_skew_3");
  EXPECT_EQ(partition_name(PartitionKind::kLabelSkew4), "label_skew_4");
  EXPECT_EQ(partition_name(PartitionKind::kRotation), "rotation");
  EXPECT_EQ(partition_name(PartitionKind::kClassPerCluster), "class_per_cluster");
  try {
    parse_partition_kind("label_skew_5");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--partition must be one of label_skew_1, concept_shift, feature_skew, "
                 "label_skew_2, label_skew_3, label_skew_4, rotation, class_per_cluster, but got "
                 "'label_skew_5'");
  }
}

TEST(Partition, LabelSkew1GivesDisjointClassPairs) {
  const PartitionSpec spec = spec_of(PartitionKind::kLabelSkew1, 5, 5, 100, 20);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  EXPECT_EQ(partition.true_clusters(), (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2,
                                                         2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4}));
  for (int k = 0; k < spec.clusters; ++k) {
    const std::vector<ClientShard> shards = cluster_clients(partition, k);
    const std::set<std::int64_t> pair{2 * k, 2 * k + 1};
    EXPECT_EQ(labels_of(dataset().train, disjoint_union(shards, true)), pair);
    EXPECT_EQ(labels_of(dataset().test, disjoint_union(shards, false)), pair);
    for (const ClientShard& shard : shards) {
      EXPECT_EQ(shard.rotation_quarters, 0);
      EXPECT_EQ(shard.label_map, identity_label_map(kClasses));
    }
  }
  // Disjoint across all 25 clients, not only within a cluster.
  EXPECT_EQ(disjoint_union(partition.clients, true).size(), 25U * 100U);
  EXPECT_EQ(disjoint_union(partition.clients, false).size(), 25U * 20U);
}

TEST(Partition, LabelSkew1AtCapacityUsesTheWholeClassPair) {
  // 600 train / 120 test samples per class pair, 5 clients: at most 120 / 24 per client.
  const Partition partition =
      make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 120, 24), dataset());
  for (int k = 0; k < 5; ++k) {
    const std::set<std::int64_t> train = disjoint_union(cluster_clients(partition, k), true);
    const std::set<std::int64_t> test = disjoint_union(cluster_clients(partition, k), false);
    EXPECT_EQ(train.size(), 600U);
    EXPECT_EQ(test.size(), 120U);
    EXPECT_EQ(labels_of(dataset().train, train), (std::set<std::int64_t>{2 * k, 2 * k + 1}));
    EXPECT_LT(*test.rbegin(), kTestSize);
  }
}

TEST(Partition, TooManySamplesThrowsDataErrorWithTheMaximum) {
  try {
    make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 121, 24), dataset());
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(),
                 "label_skew_1: cluster 0 has 600 training samples, enough for at most 120 per "
                 "client with 5 clients per cluster, but --train-samples is 121; lower "
                 "--train-samples or --clients-per-cluster");
  }
  try {
    make_partition(spec_of(PartitionKind::kConceptShift, 4, 5, 150, 31), dataset());
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("150 test samples, enough for at most 30 per client"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--test-samples is 31"), std::string::npos);
  }
}

TEST(Partition, DataErrorNamesTheSmallestCluster) {
  ImageDataset skewed = synthetic_dataset();
  // Half of class 5 (150 of 300) becomes class 0: cluster 2 keeps 450 train samples.
  torch::Tensor labels = skewed.train.labels;
  const torch::Tensor moved = labels.eq(5).logical_and(torch::arange(kTrainSize).lt(1500));
  labels.masked_fill_(moved, 0);
  try {
    make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 100, 20), skewed);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cluster 2 has 450 training samples, enough for at most 90 per client"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 90, 20), skewed));
}

TEST(Partition, ConceptShiftUsesTheOfficialSwaps) {
  const std::vector<std::vector<std::int64_t>> expected = {
      {3, 1, 2, 0, 4, 5, 6, 7, 9, 8},  // 0<->3, 8<->9
      {0, 4, 2, 3, 1, 5, 9, 7, 8, 6},  // 1<->4, 6<->9
      {0, 2, 1, 6, 4, 5, 3, 7, 8, 9},  // 1<->2, 3<->6
      {0, 1, 2, 5, 7, 3, 6, 4, 8, 9},  // 3<->5, 4<->7
  };
  const PartitionSpec spec = spec_of(PartitionKind::kConceptShift, 4, 5, 100, 20);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  for (const ClientShard& shard : partition.clients) {
    EXPECT_EQ(shard.label_map, expected[static_cast<std::size_t>(shard.true_cluster)]);
    EXPECT_EQ(shard.rotation_quarters, 0);
  }
}

TEST(Partition, ConceptShiftDrawsDistinctSwapsBeyondFourClusters) {
  for (const std::uint64_t seed : {1U, 2U, 3U}) {
    const auto maps = concept_shift_label_maps(6, kClasses, seed);
    ASSERT_EQ(maps.size(), 6U);
    EXPECT_EQ(maps[0], concept_shift_label_maps(4, kClasses, seed)[0]);
    for (std::size_t k = 4; k < 6; ++k) {
      const std::vector<std::int64_t>& map = maps[k];
      int moved = 0;
      for (std::int64_t y = 0; y < kClasses; ++y) {
        EXPECT_EQ(map[map[y]], y) << "two swaps make an involution";
        moved += map[y] != y ? 1 : 0;
      }
      EXPECT_EQ(moved, 4) << "two disjoint swaps move exactly four labels";
      for (std::size_t j = 0; j < k; ++j) {
        EXPECT_NE(map, maps[j]) << "cluster " << k << " repeats cluster " << j;
      }
    }
  }
  EXPECT_NE(concept_shift_label_maps(6, kClasses, 1)[4],
            concept_shift_label_maps(6, kClasses, 2)[4]);
  // A K = 6 partition gets those maps for train and test alike.
  const Partition partition =
      make_partition(spec_of(PartitionKind::kConceptShift, 6, 5, 100, 20, 1), dataset());
  EXPECT_EQ(partition.clients[29].label_map, concept_shift_label_maps(6, kClasses, 1)[5]);
}

TEST(Partition, ConceptShiftReachesEveryDistinctLabelMap) {
  const int max = max_clusters(PartitionKind::kConceptShift, kClasses);
  EXPECT_EQ(max, 630);
  const auto maps = concept_shift_label_maps(max, kClasses, 11);
  EXPECT_EQ(std::set<std::vector<std::int64_t>>(maps.begin(), maps.end()).size(), 630U);
}

TEST(Partition, ConceptShiftClustersUseDisjointEqualShares) {
  // 300 train / 60 test per class, K = 4: 75 / 15 per class and cluster; 5 clients take 150 / 30.
  const PartitionSpec spec = spec_of(PartitionKind::kConceptShift, 4, 5, 150, 30);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  EXPECT_EQ(disjoint_union(partition.clients, true).size(), 20U * 150U);
  EXPECT_EQ(disjoint_union(partition.clients, false).size(), 20U * 30U);
  for (int k = 0; k < 4; ++k) {
    std::map<std::int64_t, int> per_class;
    for (const std::int64_t i : disjoint_union(cluster_clients(partition, k), true)) {
      ++per_class[dataset().train.labels[i].item<std::int64_t>()];
    }
    ASSERT_EQ(per_class.size(), 10U);
    for (const auto& [label, count] : per_class) {
      EXPECT_EQ(count, 75) << "class " << label << " in cluster " << k;
    }
  }
}

TEST(Partition, ClientSamplesDecodeToTheShardAndMapLabels) {
  const Partition partition =
      make_partition(spec_of(PartitionKind::kConceptShift, 4, 5, 100, 20), dataset());
  const ClientShard& shard = partition.clients[7];  // cluster 1: 1<->4, 6<->9
  for (const bool train : {true, false}) {
    const ClientSamples samples = client_samples(dataset(), shard, train);
    const auto& indices = train ? shard.train_indices : shard.test_indices;
    const ImageSplit& split = train ? dataset().train : dataset().test;
    ASSERT_EQ(samples.inputs.sizes(),
              (torch::IntArrayRef{static_cast<std::int64_t>(indices.size()), 1, 28, 28}));
    EXPECT_EQ(samples.inputs.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(samples.inputs.is_contiguous());
    EXPECT_LE(samples.inputs.max().item<float>(), 1.0F);
    EXPECT_EQ(samples.targets.scalar_type(), torch::kInt64);
    EXPECT_EQ(decode_indices(samples.inputs, train ? kTrainMarker : kTestMarker), indices);
    for (std::size_t j = 0; j < indices.size(); ++j) {
      const std::int64_t label = split.labels[indices[j]].item<std::int64_t>();
      EXPECT_EQ(samples.targets[static_cast<std::int64_t>(j)].item<std::int64_t>(),
                shard.label_map[label]);
    }
  }
  // Known values: original label 4 becomes 1 and 6 becomes 9 in cluster 1.
  EXPECT_EQ(shard.label_map[4], 1);
  EXPECT_EQ(shard.label_map[6], 9);
}

TEST(Partition, FeatureSkewRotatesClusterKByKQuarterTurns) {
  const PartitionSpec spec = spec_of(PartitionKind::kFeatureSkew, 4, 3, 100, 20);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  for (const ClientShard& shard : partition.clients) {
    EXPECT_EQ(shard.rotation_quarters, shard.true_cluster);
    EXPECT_EQ(shard.label_map, identity_label_map(kClasses));
    const ClientSamples samples = client_samples(dataset(), shard, /*train=*/true);
    // Undoing the rotation restores the stored images exactly.
    const torch::Tensor unrotated = torch::rot90(samples.inputs, -shard.rotation_quarters, {2, 3});
    EXPECT_EQ(decode_indices(unrotated, kTrainMarker), shard.train_indices);
    EXPECT_EQ(samples.targets.equal(dataset().train.labels.index_select(
                  0, torch::tensor(shard.train_indices, torch::kInt64))),
              true);
  }
  for (int k = 0; k < 4; ++k) {
    const std::vector<ClientShard> shards = cluster_clients(partition, k);
    const std::set<std::int64_t> train = disjoint_union(shards, true);
    EXPECT_EQ(labels_of(dataset().train, train).size(), 10U);
    disjoint_union(shards, false);
  }
  // Each cluster draws from the whole split: at capacity, cluster k covers all 3000 images.
  const Partition full =
      make_partition(spec_of(PartitionKind::kFeatureSkew, 4, 3, 1000, 200), dataset());
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(disjoint_union(cluster_clients(full, k), true).size(), 3000U);
    EXPECT_EQ(disjoint_union(cluster_clients(full, k), false).size(), 600U);
  }
}

TEST(Partition, RotationTurnsByHalfTurnsForTwoClustersAndQuarterTurnsForFour) {
  // IFCA Sec. 6.2: rotated CIFAR-10 (K = 2) uses 0 and 180 degrees, rotated MNIST (K = 4) 0..270.
  for (const auto& [clusters, step] : std::vector<std::pair<int, int>>{{2, 2}, {4, 1}}) {
    const PartitionSpec spec = spec_of(PartitionKind::kRotation, clusters, 3, 100, 20);
    const Partition partition = make_partition(spec, dataset());
    expect_sizes(partition, spec);
    for (int k = 0; k < clusters; ++k) {
      const auto shards = cluster_clients(partition, k);
      EXPECT_EQ(shards.front().rotation_quarters, step * k);
      // Every cluster permutes the whole split: its clients hold disjoint data of all classes.
      EXPECT_EQ(labels_of(dataset().train, disjoint_union(shards, /*train=*/true)).size(), 10U);
    }
  }
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kRotation, 3, 3, 100, 20), dataset()), ConfigError);
}

TEST(Partition, ClassPerClusterGivesClusterKOnlyClassK) {
  const PartitionSpec spec = spec_of(PartitionKind::kClassPerCluster, 10, 2, 100, 20);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  for (int k = 0; k < spec.clusters; ++k) {
    const auto shards = cluster_clients(partition, k);
    EXPECT_EQ(labels_of(dataset().train, disjoint_union(shards, /*train=*/true)), std::set<std::int64_t>{k});
    EXPECT_EQ(labels_of(dataset().test, disjoint_union(shards, /*train=*/false)), std::set<std::int64_t>{k});
  }
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kClassPerCluster, 11, 1, 10, 5), dataset()), ConfigError);
}

TEST(Partition, ClientSamplesTurnsImagesCounterClockwise) {
  ImageDataset tiny;
  tiny.num_classes = kClasses;
  tiny.train.images = torch::zeros({1, 1, 28, 28}, torch::kUInt8);
  tiny.train.images[0][0][0][27] = 255;  // top-right corner
  tiny.train.labels = torch::tensor({3}, torch::kInt64);
  tiny.test = tiny.train;
  ClientShard shard;
  shard.train_indices = {0};
  shard.label_map = identity_label_map(kClasses);
  // PIL's rotate(90 * q) turns counter-clockwise: top-right -> top-left -> bottom-left ->
  // bottom-right.
  const std::vector<std::pair<int, int>> corner = {{0, 27}, {0, 0}, {27, 0}, {27, 27}};
  for (int q = 0; q < 4; ++q) {
    shard.rotation_quarters = q;
    const torch::Tensor image = client_samples(tiny, shard, true).inputs[0][0];
    const auto [row, col] = corner[static_cast<std::size_t>(q)];
    EXPECT_FLOAT_EQ(image[row][col].item<float>(), 1.0F) << q << " quarter turns";
    EXPECT_FLOAT_EQ(image.sum().item<float>(), 1.0F);
  }
}

TEST(Partition, SameSeedGivesIdenticalPartitionAndAnotherSeedDiffers) {
  for (const PartitionKind kind :
       {PartitionKind::kLabelSkew1, PartitionKind::kConceptShift, PartitionKind::kFeatureSkew}) {
    const PartitionSpec spec = spec_of(kind, 4, 3, 50, 10, 5);
    const Partition a = make_partition(spec, dataset());
    const Partition b = make_partition(spec, dataset());
    PartitionSpec other = spec;
    other.data_seed = 6;
    const Partition c = make_partition(other, dataset());
    for (std::size_t i = 0; i < a.clients.size(); ++i) {
      EXPECT_EQ(a.clients[i].train_indices, b.clients[i].train_indices);
      EXPECT_EQ(a.clients[i].test_indices, b.clients[i].test_indices);
      EXPECT_EQ(a.clients[i].label_map, b.clients[i].label_map);
      EXPECT_NE(a.clients[i].train_indices, c.clients[i].train_indices) << partition_name(kind);
      EXPECT_NE(a.clients[i].test_indices, c.clients[i].test_indices) << partition_name(kind);
    }
  }
}

TEST(Partition, ClusterCountsOutOfRangeThrowConfigError) {
  const auto message = [](const PartitionSpec& spec) {
    try {
      make_partition(spec, dataset());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no ConfigError");
  };
  EXPECT_EQ(message(spec_of(PartitionKind::kLabelSkew1, 6, 5, 10, 10)),
            "--clusters must be between 1 and 5 for --partition label_skew_1 (two classes per "
            "cluster out of 10), but got 6");
  EXPECT_EQ(message(spec_of(PartitionKind::kFeatureSkew, 5, 5, 10, 10)),
            "--clusters must be between 1 and 4 for --partition feature_skew (one rotation by 0, "
            "90, 180 or 270 degrees per cluster), but got 5");
  for (const PartitionKind kind :
       {PartitionKind::kLabelSkew1, PartitionKind::kConceptShift, PartitionKind::kFeatureSkew}) {
    EXPECT_NE(message(spec_of(kind, 0, 5, 10, 10)).find("--clusters must be between 1 and"),
              std::string::npos);
  }
  EXPECT_EQ(message(spec_of(PartitionKind::kLabelSkew1, 5, 0, 10, 10)),
            "--clients-per-cluster must be at least 1, but got 0");
  EXPECT_EQ(message(spec_of(PartitionKind::kLabelSkew1, 5, 5, 0, 10)),
            "--train-samples must be at least 1, but got 0");
  EXPECT_EQ(message(spec_of(PartitionKind::kLabelSkew1, 5, 5, 10, -1)),
            "--test-samples must be at least 1, but got -1");
  EXPECT_THROW(label_skew_1_pools(dataset(), 6), ConfigError);
  EXPECT_THROW(feature_skew_pools(dataset(), 0), ConfigError);
  EXPECT_THROW(concept_shift_label_maps(631, kClasses, 1), ConfigError);
  EXPECT_THROW(concept_shift_label_maps(4, 8, 1), DataError);
}

TEST(Partition, RealFashionMnistGivesTheOfficialSizes) {
  ImageDataset fmnist;
  try {
    fmnist = load_image_dataset("fmnist", "/usr/share/datasets/fashion-mnist");
  } catch (const std::exception& e) {
    GTEST_SKIP() << "Fashion-MNIST not loadable: " << e.what();
  }
  // Label skew 1, rows 1420: 5 x 5 clients, 500 train; test = pool 2 000 // 5 = 400.
  const Partition ls1 =
      make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 500, 400, 1), fmnist);
  EXPECT_EQ(labels_of(fmnist.test, ls1.clients[24].test_indices), (std::set<std::int64_t>{8, 9}));
  EXPECT_EQ(disjoint_union(cluster_clients(ls1, 2), false).size(), 2000U);
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 2401, 400, 1), fmnist),
               DataError);
  EXPECT_NO_THROW(make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 5, 2400, 400, 1), fmnist));
  // Concept shift, row 1020: 4 x 5 clients, 1 000 train, 400 test each.
  const Partition cs =
      make_partition(spec_of(PartitionKind::kConceptShift, 4, 5, 1000, 400, 1), fmnist);
  EXPECT_EQ(disjoint_union(cs.clients, true).size(), 20U * 1000U);
  // Feature skew, row 1220: 4 x 10 clients, 500 / 500.
  const Partition fs =
      make_partition(spec_of(PartitionKind::kFeatureSkew, 4, 10, 500, 500, 1), fmnist);
  const ClientSamples samples = client_samples(fmnist, fs.clients[39], /*train=*/false);
  EXPECT_EQ(samples.inputs.sizes(), (torch::IntArrayRef{500, 1, 28, 28}));
  EXPECT_GT(samples.inputs.max().item<float>(), 0.9F);
  EXPECT_GE(samples.inputs.min().item<float>(), 0.0F);
}

}  // namespace
}  // namespace cflrun::data
