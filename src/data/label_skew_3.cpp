#include <cflrun/data/cluster_pools.hpp>

namespace cflrun::data {

LabelSets label_skew_3_label_sets(int clusters, int num_classes) {
  check_cluster_count(PartitionKind::kLabelSkew3, clusters, num_classes);
  LabelSets sets(static_cast<std::size_t>(clusters));
  for (int k = 0; k < clusters; ++k) {
    // Cluster k < K - 1 misses class (k - 1) mod n: cluster 0 misses 9, cluster 1 misses 0, ...
    const bool last = k == clusters - 1;
    const int missing = (k + num_classes - 1) % num_classes;
    for (int c = 0; c < num_classes; ++c) {
      if (last || c != missing) {
        sets[static_cast<std::size_t>(k)].push_back(c);
      }
    }
  }
  return sets;
}

std::vector<ClusterPool> label_skew_3_pools(const PartitionSpec& spec,
                                            const ImageDataset& dataset) {
  return class_split_pools(spec, dataset,
                           label_skew_3_label_sets(spec.clusters, dataset.num_classes));
}

}  // namespace cflrun::data
