#pragma once
// Shared by the partition tests (partition_test.cpp, feature_skew_partition_test.cpp): a
// synthetic dataset whose pixels encode each image's index and split, and checks of shards.
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

namespace cflrun::data::partition_testing {

inline constexpr int kClasses = 10;
inline constexpr std::int64_t kTrainSize = 3000;  // 300 per class
inline constexpr std::int64_t kTestSize = 600;    // 60 per class
inline constexpr std::int64_t kTrainMarker = 1;   // pixel (0, 2) tells the split of an image
inline constexpr std::int64_t kTestMarker = 2;

/// A split whose image i stores i in pixels (0, 0) (low byte) and (0, 1) (high byte) and the split
/// marker in pixel (0, 2); label i % 10.
inline ImageSplit synthetic_split(std::int64_t n, std::int64_t marker) {
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

inline ImageDataset synthetic_dataset() {
  ImageDataset dataset;
  dataset.name = "synthetic";
  dataset.num_classes = kClasses;
  dataset.train = synthetic_split(kTrainSize, kTrainMarker);
  dataset.test = synthetic_split(kTestSize, kTestMarker);
  return dataset;
}

inline const ImageDataset& dataset() {
  static const ImageDataset data = synthetic_dataset();
  return data;
}

/// The set of labels of the samples `idx` (a vector or set of indices) of a split.
template <typename Indices>
inline std::set<std::int64_t> labels_of(const ImageSplit& split, const Indices& idx) {
  std::set<std::int64_t> labels;
  for (const std::int64_t i : idx) {
    labels.insert(split.labels[i].item<std::int64_t>());
  }
  return labels;
}

/// All train (or test) indices of the given clients; fails if one appears twice.
inline std::set<std::int64_t> disjoint_union(const std::vector<ClientShard>& shards, bool train) {
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

inline std::vector<ClientShard> cluster_clients(const Partition& partition, int k) {
  std::vector<ClientShard> shards;
  for (const ClientShard& shard : partition.clients) {
    if (shard.true_cluster == k) {
      shards.push_back(shard);
    }
  }
  return shards;
}

/// The sample indices and split markers stored in the pixels of unrotated images [n, 1, 28, 28].
inline std::vector<std::int64_t> decode_indices(const torch::Tensor& inputs, std::int64_t marker) {
  const torch::Tensor pixels = inputs.mul(255).round().to(torch::kInt64);
  EXPECT_TRUE(pixels.select(3, 2).select(2, 0).select(1, 0).eq(marker).all().item<bool>());
  const torch::Tensor index = pixels.select(3, 0).select(2, 0).select(1, 0) +
                              256 * pixels.select(3, 1).select(2, 0).select(1, 0);
  return std::vector<std::int64_t>(index.data_ptr<std::int64_t>(),
                                   index.data_ptr<std::int64_t>() + index.numel());
}

inline void expect_sizes(const Partition& partition, const PartitionSpec& spec) {
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

}  // namespace cflrun::data::partition_testing
