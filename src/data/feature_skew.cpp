#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {

std::vector<ClusterPool> feature_skew_pools(const ImageDataset& dataset, int clusters) {
  check_cluster_count(PartitionKind::kFeatureSkew, clusters, dataset.num_classes);
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    ClusterPool& pool = pools[static_cast<std::size_t>(k)];
    // The whole split in every cluster: the official code reloads the full dataset per rotation.
    pool.train = torch::arange(dataset.train.size(), torch::kInt64);
    pool.test = torch::arange(dataset.test.size(), torch::kInt64);
    pool.rotation_quarters = k;
    pool.label_map = identity_label_map(dataset.num_classes);
  }
  return pools;
}

}  // namespace cflrun::data
