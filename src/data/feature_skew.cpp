#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {
namespace {

/// Every cluster's pool is the whole split, turned `quarters(k)` quarter turns for cluster k.
template <typename Quarters>
std::vector<ClusterPool> whole_split_pools(const ImageDataset& dataset, int clusters,
                                           Quarters quarters) {
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    ClusterPool& pool = pools[static_cast<std::size_t>(k)];
    // The whole split in every cluster: the official code reloads the full dataset per rotation.
    pool.train = torch::arange(dataset.train.size(), torch::kInt64);
    pool.test = torch::arange(dataset.test.size(), torch::kInt64);
    pool.rotation_quarters = quarters(k);
    pool.label_map = identity_label_map(dataset.num_classes);
  }
  return pools;
}

}  // namespace

std::vector<ClusterPool> feature_skew_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kFeatureSkew, clusters, dataset.num_classes);
  return whole_split_pools(dataset, clusters, [](int k) { return k; });
}

std::vector<ClusterPool> label_permutation_pools(const ImageDataset& dataset, int clusters,
                                                 std::uint64_t pool_seed) {
  std::vector<ClusterPool> pools = feature_skew_pools(dataset, clusters);
  for (std::size_t k = 0; k < pools.size(); ++k) {
    pools[k].rotation_quarters = 0;
    pools[k].label_map = random_class_permutation(dataset.num_classes, pool_seed,
                                                  PartitionStream::kLabelPermutation, k);
  }
  return pools;
}

std::vector<std::int64_t> random_class_permutation(int num_classes, std::uint64_t seed,
                                                   PartitionStream stream, std::uint64_t index) {
  std::vector<std::int64_t> order = identity_label_map(num_classes);
  auto engine =
      core::make_engine(seed, core::Purpose::kPartition, index, static_cast<std::uint64_t>(stream));
  core::shuffle_prefix(engine, order, order.size());
  return order;
}

void shuffle_class_order(ImageDataset& dataset, std::uint64_t pool_seed) {
  const torch::Tensor order = torch::tensor(
      random_class_permutation(dataset.num_classes, pool_seed, PartitionStream::kClassOrder, 0),
      torch::kInt64);
  for (ImageSplit* split : {&dataset.train, &dataset.test}) {
    if (split->labels.dim() != 1 || split->labels.scalar_type() != torch::kInt64) {
      throw ShapeError("shuffle_class_order: labels must be [N] int64, but got " +
                       split->labels.toString());
    }
    split->labels = order.index_select(0, split->labels);
  }
}

std::vector<ClusterPool> rotation_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kRotation, clusters, dataset.num_classes);
  if (clusters == 3) {
    throw ConfigError(
        "--partition rotation takes --clusters 1, 2 (0 and 180 degrees) or 4 (multiples of 90), "
        "as in IFCA Sec. 6.2, but got 3");
  }
  const int step = clusters == 2 ? 2 : 1;
  return whole_split_pools(dataset, clusters, [step](int k) { return step * k; });
}

}  // namespace cflrun::data
