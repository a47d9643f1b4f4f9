// Shards of a changing population (issue 45): clients moved to another cluster's distribution and
// the clients of an appearing cluster, drawn from the cluster pools the partition keeps.
#include "partition_helpers.hpp"

namespace cflrun::data {
namespace {

using partition_testing::dataset;
using partition_testing::labels_of;

TEST(MovedShard, DrawsFromTheTargetClustersPoolWithItsTransform) {
  auto spec = spec_of(PartitionKind::kLabelSkew1, 3, 2, 50, 20);
  spec.new_distributions = 1;           // cluster 3: classes {6, 7}
  spec.extra_client_clusters = {3, 3};  // an appearing cluster of two clients
  const auto partition = make_partition(spec, dataset());
  ASSERT_EQ(partition.clients.size(), 8U);
  ASSERT_EQ(partition.pools.size(), 4U);
  EXPECT_EQ(partition.clients[6].true_cluster, 3);
  EXPECT_EQ(labels_of(dataset().train, partition.clients[6].train_indices),
            (std::set<std::int64_t>{6, 7}));
  EXPECT_EQ(partition.clients[6].train_indices.size(), 50U);
  EXPECT_NE(partition.clients[6].train_indices, partition.clients[7].train_indices);

  const auto moved = moved_shard(partition, 0, 2);  // client 0 (cluster 0) into cluster 2
  EXPECT_EQ(moved.true_cluster, 2);
  EXPECT_EQ(labels_of(dataset().train, moved.train_indices), (std::set<std::int64_t>{4, 5}));
  EXPECT_EQ(labels_of(dataset().test, moved.test_indices), (std::set<std::int64_t>{4, 5}));
  EXPECT_EQ(std::set<std::int64_t>(moved.train_indices.begin(), moved.train_indices.end()).size(),
            50U);  // without replacement
  EXPECT_EQ(moved.train_indices, moved_shard(partition, 0, 2).train_indices);  // deterministic
  EXPECT_NE(moved.train_indices, moved_shard(partition, 1, 2).train_indices);  // per client
  // Its own cluster gives back its own shard.
  EXPECT_EQ(moved_shard(partition, 0, 0).train_indices, partition.clients[0].train_indices);
  EXPECT_THROW(moved_shard(partition, 0, 4), ConfigError);
}

TEST(MovedShard, ConceptShiftMovesTakeTheNewLabelMap) {
  auto spec = spec_of(PartitionKind::kConceptShift, 2, 2, 40, 10);
  spec.new_distributions = 1;
  const auto partition = make_partition(spec, dataset());
  ASSERT_EQ(partition.clients.size(), 4U);  // no appearing clients
  const auto moved = moved_shard(partition, 1, 2);
  EXPECT_EQ(moved.label_map, partition.pools[2]->label_map);
  EXPECT_NE(moved.label_map, partition.clients[1].label_map);
}

TEST(MovedShard, NewDistributionsBeyondThePartitionsLimitAreRefused) {
  auto spec = spec_of(PartitionKind::kFeatureSkew, 4, 2, 40, 10);
  spec.new_distributions = 1;  // a fifth rotation does not exist
  try {
    make_partition(spec, dataset());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--changes introduces 1 new cluster distribution"),
              std::string::npos);
  }
  auto fixed = spec_of(PartitionKind::kFeatureSkew, 4, 2, 40, 10);
  EXPECT_TRUE(make_partition(fixed, dataset()).pools.empty());  // a fixed population keeps none
  fixed.keep_cluster_pools = true;  // a drift between the initial clusters
  const auto drifting = make_partition(fixed, dataset());
  ASSERT_EQ(drifting.pools.size(), 4U);
  EXPECT_EQ(moved_shard(drifting, 0, 3).rotation_quarters, 3);
}

}  // namespace
}  // namespace cflrun::data
