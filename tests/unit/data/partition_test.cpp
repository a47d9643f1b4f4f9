// Partitions: kind names, label skew 1, sample counts and their errors, concept shift's label
// swaps, and client samples decoded back to their shards.
#include "partition_helpers.hpp"

#include <gtest/gtest.h>

namespace cflrun::data {
namespace {

using namespace partition_testing;

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

}  // namespace
}  // namespace cflrun::data
