#pragma once
// Shared by the label skew partition tests (label_skew_partition_test.cpp,
// label_skew_shares_test.cpp): a labels-only synthetic dataset, real Fashion-MNIST where
// installed, and checks of label sets and cluster pools.
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

namespace cflrun::data::label_skew_testing {

inline constexpr int kClasses = 10;

/// Labels 0, 1, ..., 9, 0, 1, ... (n / 10 per class); partitions never read the images.
inline ImageSplit labels_only_split(std::int64_t n) {
  ImageSplit split;
  split.labels = torch::arange(n, torch::kInt64).remainder(kClasses);
  return split;
}

inline ImageDataset labels_only_dataset(std::int64_t train, std::int64_t test) {
  ImageDataset d;
  d.name = "synthetic";
  d.num_classes = kClasses;
  d.train = labels_only_split(train);
  d.test = labels_only_split(test);
  return d;
}

/// 300 train / 60 test samples per class.
inline const ImageDataset& synthetic() {
  static const ImageDataset data = labels_only_dataset(3000, 600);
  return data;
}

/// Real Fashion-MNIST, or nullptr where it is not installed.
inline const ImageDataset* fmnist() {
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
inline PartitionSpec small_spec(PartitionKind kind, int clusters, std::uint64_t seed = 7) {
  PartitionSpec spec = spec_of(kind, clusters, 2, 10, 2, seed);
  spec.min_cluster_train_samples = 0;
  spec.min_cluster_test_samples = 0;
  return spec;
}

inline std::vector<std::int64_t> as_vector(const torch::Tensor& indices) {
  const torch::Tensor c = indices.to(torch::kInt64).contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

/// count[label] of the samples `indices` of a split.
inline std::map<std::int64_t, std::int64_t> class_counts(const ImageSplit& split,
                                                         const torch::Tensor& indices) {
  std::map<std::int64_t, std::int64_t> counts;
  for (const std::int64_t i : as_vector(split.labels.index_select(0, indices))) {
    ++counts[i];
  }
  return counts;
}

inline std::set<std::int64_t> classes_of(const ImageSplit& split, const torch::Tensor& indices) {
  std::set<std::int64_t> classes;
  for (const auto& [label, count] : class_counts(split, indices)) {
    classes.insert(label);
  }
  return classes;
}

/// Every index of one split's pools; fails if two pools share an index.
inline std::set<std::int64_t> disjoint_pools(const std::vector<ClusterPool>& pools, bool train) {
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
inline void expect_support(const ImageDataset& data, const std::vector<ClusterPool>& pools,
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

inline std::size_t shared(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  return common.size();
}

inline void expect_label_sets(const LabelSets& sets, int clusters, int u, int v) {
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
inline std::uint64_t fingerprint(const Partition& partition) {
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

inline std::string config_error(const PartitionSpec& spec, const ImageDataset& data) {
  try {
    make_partition(spec, data);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

}  // namespace cflrun::data::label_skew_testing
