// Partitions: feature skew's rotations, class-per-cluster, seeds, cluster-count errors and the
// official sizes on real Fashion-MNIST.
#include "partition_helpers.hpp"

#include <gtest/gtest.h>

namespace cflrun::data {
namespace {

using namespace partition_testing;

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
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kRotation, 3, 3, 100, 20), dataset()),
               ConfigError);
}

TEST(Partition, ClassPerClusterGivesClusterKOnlyClassK) {
  const PartitionSpec spec = spec_of(PartitionKind::kClassPerCluster, 10, 2, 100, 20);
  const Partition partition = make_partition(spec, dataset());
  expect_sizes(partition, spec);
  for (int k = 0; k < spec.clusters; ++k) {
    const auto shards = cluster_clients(partition, k);
    EXPECT_EQ(labels_of(dataset().train, disjoint_union(shards, /*train=*/true)),
              std::set<std::int64_t>{k});
    EXPECT_EQ(labels_of(dataset().test, disjoint_union(shards, /*train=*/false)),
              std::set<std::int64_t>{k});
  }
  EXPECT_THROW(make_partition(spec_of(PartitionKind::kClassPerCluster, 11, 1, 10, 5), dataset()),
               ConfigError);
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

TEST(PartitionOnThisMachine, RealFashionMnistGivesTheOfficialSizes) {
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
