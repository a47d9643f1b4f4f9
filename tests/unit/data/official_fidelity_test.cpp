// The data choices of --fidelity official (PartitionSpec::official_fidelity, pool_seed) and the
// official CIFAR-10 class order and "feature skew" (clove-official-setup.md Sec. 0-6).
#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/data/cluster_pools.hpp>
#include <cflrun/data/partition.hpp>

#include "partition_spec_for_tests.hpp"

namespace cflrun::data {
namespace {

constexpr int kClasses = 10;

/// 300 train / 60 test images per class (label i % 10), all pixels zero.
ImageDataset small_dataset(const std::string& name) {
  ImageDataset dataset;
  dataset.name = name;
  dataset.num_classes = kClasses;
  for (auto [split, n] : {std::pair{&dataset.train, 3000}, std::pair{&dataset.test, 600}}) {
    split->images = torch::zeros({n, 1, 28, 28}, torch::kUInt8);
    split->labels = torch::arange(n, torch::kInt64).remainder(kClasses);
  }
  return dataset;
}

bool is_permutation_of_classes(const std::vector<std::int64_t>& map) {
  std::vector<std::int64_t> sorted = map;
  std::sort(sorted.begin(), sorted.end());
  return sorted == identity_label_map(kClasses);
}

TEST(OfficialFidelity, TestSamplesPerClientFollowThePoolCappedByTrainSamples) {
  // Label skew 1: test pools of 2 x 60 = 120; 5 clients -> 24 each, whatever --test-samples says.
  auto spec = spec_of(PartitionKind::kLabelSkew1, 5, 5, 50, 400);
  spec.official_fidelity = true;
  const Partition partition = make_partition(spec, small_dataset("synthetic"));
  for (const ClientShard& shard : partition.clients) {
    EXPECT_EQ(shard.train_indices.size(), 50U);
    EXPECT_EQ(shard.test_indices.size(), 24U);
  }
  spec.train_samples = 20;  // the official cap: min(pool // cpc, datapoints per client)
  EXPECT_EQ(make_partition(spec, small_dataset("synthetic")).clients[0].test_indices.size(), 20U);
  spec.official_fidelity = false;
  EXPECT_THROW(make_partition(spec, small_dataset("synthetic")), DataError);  // 400 test do not fit
}

TEST(OfficialFidelity, APoolSeedKeepsThePoolsAndTheDataSeedMovesTheClientSplit) {
  const ImageDataset data = small_dataset("synthetic");
  auto spec = spec_of(PartitionKind::kLabelSkew2, 5, 2, 40, 5, /*seed=*/7);
  spec.min_cluster_train_samples = 100;
  spec.min_cluster_test_samples = 20;
  spec.pool_seed = 1;
  auto other_seed = spec;
  other_seed.data_seed = 8;
  const auto pools = cluster_pools(spec, data);
  const auto same_pools = cluster_pools(other_seed, data);
  for (std::size_t k = 0; k < pools.size(); ++k) {
    EXPECT_TRUE(torch::equal(pools[k].train, same_pools[k].train));
    EXPECT_TRUE(torch::equal(pools[k].test, same_pools[k].test));
  }
  EXPECT_NE(make_partition(spec, data).clients[0].train_indices,
            make_partition(other_seed, data).clients[0].train_indices);
  other_seed.pool_seed = 2;
  const auto other_pools = cluster_pools(other_seed, data);
  bool any_differs = false;
  for (std::size_t k = 0; k < pools.size(); ++k) {
    any_differs |= !torch::equal(pools[k].train, other_pools[k].train);
  }
  EXPECT_TRUE(any_differs);
  spec.pool_seed.reset();  // unset: the data seed draws the pools too
  EXPECT_EQ(spec.effective_pool_seed(), 7U);
}

TEST(OfficialFidelity, ConceptShiftSharesAreCappedPerClassAndCluster) {
  const auto pools = concept_shift_pools(small_dataset("synthetic"), 4, 3, ClassShare{20, 5});
  ASSERT_EQ(pools.size(), 4U);
  std::set<std::int64_t> seen;
  for (const ClusterPool& pool : pools) {
    EXPECT_EQ(pool.train.size(0), kClasses * 20);
    EXPECT_EQ(pool.test.size(0), kClasses * 5);
    for (std::int64_t i = 0; i < pool.train.size(0); ++i) {
      EXPECT_TRUE(seen.insert(pool.train[i].item<std::int64_t>()).second) << "pools overlap";
    }
  }
  EXPECT_EQ(official_concept_shift_share().max_train, 1250);
  EXPECT_EQ(official_concept_shift_share().max_test, 200);
  EXPECT_EQ(concept_shift_pools(small_dataset("synthetic"), 4, 3)[0].train.size(0),
            kClasses * 75);  // 300 / 4
}

TEST(OfficialFidelity, CifarFeatureSkewPermutesLabelsPerClusterWithoutRotating) {
  auto spec = spec_of(PartitionKind::kFeatureSkew, 4, 2, 30, 10);
  spec.official_fidelity = true;
  const Partition cifar = make_partition(spec, small_dataset("cifar10"));
  std::set<std::vector<std::int64_t>> maps;
  for (const ClientShard& shard : cifar.clients) {
    EXPECT_EQ(shard.rotation_quarters, 0);
    EXPECT_TRUE(is_permutation_of_classes(shard.label_map));
    maps.insert(shard.label_map);
  }
  EXPECT_EQ(maps.size(), 4U);  // one permutation per cluster, shared by its clients
  const Partition mnist = make_partition(spec, small_dataset("mnist"));
  EXPECT_EQ(mnist.clients.back().rotation_quarters, 3);  // (F)MNIST: still rotated
  EXPECT_EQ(mnist.clients.back().label_map, identity_label_map(kClasses));
}

TEST(OfficialFidelity, ShuffledClassOrderRelabelsBothSplitsAlike) {
  ImageDataset data = small_dataset("cifar10");
  shuffle_class_order(data, 1);
  const auto order = random_class_permutation(kClasses, 1, PartitionStream::kClassOrder, 0);
  EXPECT_TRUE(is_permutation_of_classes(order));
  EXPECT_NE(order, identity_label_map(kClasses));
  for (const ImageSplit* split : {&data.train, &data.test}) {
    for (std::int64_t i = 0; i < 20; ++i) {
      EXPECT_EQ(split->labels[i].item<std::int64_t>(),
                order[static_cast<std::size_t>(i % kClasses)]);
    }
  }
  ImageDataset again = small_dataset("cifar10");
  shuffle_class_order(again, 1);
  EXPECT_TRUE(torch::equal(again.train.labels, data.train.labels));
}

TEST(OfficialFidelity, GivenLabelSetsReplaceTheDrawnOnes) {
  // The official code's label skew 2 sets for its seed 1 (jobs/paper/make_configs.py).
  const LabelSets sets = parse_label_sets("2,4,6,9/0,2,3,4/0,4,6,7/3,4,5,6/2,3,6,7", 5, kClasses);
  ASSERT_EQ(sets.size(), 5U);
  EXPECT_EQ(sets[0], (std::vector<std::int64_t>{2, 4, 6, 9}));
  EXPECT_EQ(parse_label_sets("9,1/3,0", 2, kClasses)[0],
            (std::vector<std::int64_t>{1, 9}));                          // sorted
  EXPECT_THROW(parse_label_sets("1,2/3", 3, kClasses), ConfigError);     // 2 sets for 3 clusters
  EXPECT_THROW(parse_label_sets("1,2/3,10", 2, kClasses), ConfigError);  // 10 is no class
  EXPECT_THROW(parse_label_sets("1,1/3,4", 2, kClasses), ConfigError);   // twice in one set
  EXPECT_THROW(parse_label_sets("1,x/3,4", 2, kClasses), ConfigError);
  EXPECT_THROW(parse_label_sets("1,2//3,4", 3, kClasses), ConfigError);  // an empty set

  auto spec = spec_of(PartitionKind::kLabelSkew2, 5, 2, 40, 5);
  spec.min_cluster_train_samples = 100;
  spec.min_cluster_test_samples = 20;
  spec.label_sets = sets;
  const ImageDataset data = small_dataset("fmnist");
  const auto pools = cluster_pools(spec, data);
  for (std::size_t k = 0; k < pools.size(); ++k) {
    std::set<std::int64_t> labels;
    for (std::int64_t i = 0; i < pools[k].train.size(0); ++i) {
      labels.insert(data.train.labels[pools[k].train[i].item<std::int64_t>()].item<std::int64_t>());
    }
    EXPECT_EQ(std::vector<std::int64_t>(labels.begin(), labels.end()), sets[k]) << "cluster " << k;
  }
}

/// counts[k][c]: samples of class c in each pool.
ClassCounts pool_class_counts(const std::vector<torch::Tensor>& pools,
                              const torch::Tensor& labels) {
  ClassCounts counts;
  for (const torch::Tensor& pool : pools) {
    const torch::Tensor histogram = torch::bincount(labels.index_select(0, pool), {}, kClasses);
    counts.emplace_back(histogram.data_ptr<std::int64_t>(),
                        histogram.data_ptr<std::int64_t>() + kClasses);
  }
  return counts;
}

TEST(OfficialFidelity, GivenClassCountsReplaceTheDirichletDraw) {
  const std::string train = "100,50,30,0,0,0,0,0,0,0/0,250,20,200,0,0,0,0,0,0";
  const std::string test = "10,10,10,0,0,0,0,0,0,0/0,50,0,60,0,0,0,0,0,0";  // class 3: all 60
  auto spec = spec_of(PartitionKind::kLabelSkew2, 2, 2, 40, 5);
  spec.min_cluster_train_samples = 100;
  spec.min_cluster_test_samples = 20;
  spec.label_sets = parse_label_sets("0,1,2/1,2,3", 2, kClasses);
  spec.train_class_counts = parse_class_counts(train, "train-class-counts", 2, kClasses);
  spec.test_class_counts = parse_class_counts(test, "test-class-counts", 2, kClasses);
  const ImageDataset data = small_dataset("fmnist");
  const auto pools = cluster_pools(spec, data);
  std::vector<torch::Tensor> train_pools;
  std::vector<torch::Tensor> test_pools;
  for (const ClusterPool& pool : pools) {
    train_pools.push_back(pool.train);
    test_pools.push_back(pool.test);
  }
  EXPECT_EQ(pool_class_counts(train_pools, data.train.labels), spec.train_class_counts);
  EXPECT_EQ(pool_class_counts(test_pools, data.test.labels), spec.test_class_counts);
  EXPECT_EQ(std::get<0>(torch::_unique(torch::cat(train_pools))).size(0), 650);  // disjoint

  spec.pool_seed = 2;  // another shuffle of the classes: the same counts, other samples
  const auto reseeded = cluster_pools(spec, data);
  EXPECT_FALSE(torch::equal(reseeded[0].train, pools[0].train));
  EXPECT_EQ(reseeded[0].train.size(0), pools[0].train.size(0));

  spec.train_class_counts[1][4] = 1;  // class 4 is not in cluster 1's label set {1, 2, 3}
  EXPECT_THROW(cluster_pools(spec, data), ConfigError);
  spec.train_class_counts[1][4] = 0;
  spec.train_class_counts[1][1] = 251;  // 50 + 251 samples of class 1, which has 300
  EXPECT_THROW(cluster_pools(spec, data), ConfigError);
  spec.train_class_counts[1][1] = 250;
  spec.min_cluster_train_samples = 200;  // cluster 0 has 180
  EXPECT_THROW(cluster_pools(spec, data), DataError);

  EXPECT_THROW(parse_class_counts("1,2/3,4", "train-class-counts", 2, kClasses),
               ConfigError);  // 2 per row
  EXPECT_THROW(parse_class_counts(train, "train-class-counts", 3, kClasses),
               ConfigError);  // 2 rows
  EXPECT_THROW(parse_class_counts("-1,0,0,0,0,0,0,0,0,0", "test-class-counts", 1, kClasses),
               ConfigError);
  EXPECT_THROW(parse_class_counts("1,x,0,0,0,0,0,0,0,0", "test-class-counts", 1, kClasses),
               ConfigError);
}

}  // namespace
}  // namespace cflrun::data
