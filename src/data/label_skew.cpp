#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {
namespace {

/// [n] int64 indices, ascending, of the samples whose label is `first` or `second`.
torch::Tensor indices_of_classes(const torch::Tensor& labels, std::int64_t first,
                                 std::int64_t second) {
  return torch::nonzero(labels.eq(first).logical_or(labels.eq(second))).flatten();
}

}  // namespace

std::vector<ClusterPool> label_skew_1_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kLabelSkew1, clusters, dataset.num_classes);
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    ClusterPool& pool = pools[static_cast<std::size_t>(k)];
    pool.train = indices_of_classes(dataset.train.labels, 2 * k, 2 * k + 1);
    pool.test = indices_of_classes(dataset.test.labels, 2 * k, 2 * k + 1);
    pool.label_map = identity_label_map(dataset.num_classes);
  }
  return pools;
}

}  // namespace cflrun::data
