#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {
namespace {

/// [n] int64 indices, ascending, of the samples whose label is in [first, first + count).
torch::Tensor indices_of_classes(const torch::Tensor& labels, std::int64_t first,
                                 std::int64_t count) {
  return torch::nonzero(labels.ge(first).logical_and(labels.lt(first + count))).flatten();
}

/// Cluster k holds ALL samples of classes [k * width, (k + 1) * width) of each split.
std::vector<ClusterPool> consecutive_class_pools(const ImageDataset& dataset, int clusters,
                                                 int width) {
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    ClusterPool& pool = pools[static_cast<std::size_t>(k)];
    pool.train = indices_of_classes(dataset.train.labels, width * k, width);
    pool.test = indices_of_classes(dataset.test.labels, width * k, width);
    pool.label_map = identity_label_map(dataset.num_classes);
  }
  return pools;
}

}  // namespace

std::vector<ClusterPool> label_skew_1_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kLabelSkew1, clusters, dataset.num_classes);
  return consecutive_class_pools(dataset, clusters, /*width=*/2);
}

std::vector<ClusterPool> class_per_cluster_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kClassPerCluster, clusters, dataset.num_classes);
  return consecutive_class_pools(dataset, clusters, /*width=*/1);
}

}  // namespace cflrun::data
