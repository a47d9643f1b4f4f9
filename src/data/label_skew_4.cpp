#include <cflrun/data/cluster_pools.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

/// Group size = this fraction of the smallest class (official partition_dataset_dominance_based).
constexpr double kGroupFraction = 0.9;

/// Every class of the split, shuffled with its own stream (index = class).
std::vector<torch::Tensor> shuffled_classes(const ImageSplit& split, int num_classes,
                                            std::uint64_t data_seed, PartitionStream stream,
                                            bool train) {
  std::vector<torch::Tensor> classes;
  for (int c = 0; c < num_classes; ++c) {
    const torch::Tensor indices = torch::nonzero(split.labels.eq(c)).flatten();
    if (indices.size(0) == 0) {
      throw DataError(std::string("label_skew_4: class ") + std::to_string(c) + " has no " +
                      (train ? "training" : "test") +
                      " sample, so no cluster can be built (group size = 0.9 x the smallest "
                      "class); use a dataset with every class in both splits");
    }
    classes.push_back(indices.index_select(
        0, torch::randperm(indices.size(0), partition_generator(data_seed, stream, c),
                           torch::kInt64)));
  }
  return classes;
}

/// The pools of one split: cluster k takes `own` points of class k and `other` of every other
/// class, each class consumed from the front, clusters in order (disjoint by construction).
std::vector<torch::Tensor> dominant_pools(const ImageSplit& split, int num_classes, int clusters,
                                          double dominant_share, std::uint64_t data_seed,
                                          bool train) {
  const std::vector<torch::Tensor> classes = shuffled_classes(
      split, num_classes, data_seed,
      train ? PartitionStream::kDominantShuffleTrain : PartitionStream::kDominantShuffleTest,
      train);
  std::int64_t smallest = classes.front().size(0);
  for (const torch::Tensor& indices : classes) {
    smallest = std::min(smallest, indices.size(0));
  }
  // Python's int(0.9 * n) and int(p / 100.0 * G): truncation of the same double products.
  const auto group = static_cast<std::int64_t>(kGroupFraction * static_cast<double>(smallest));
  const auto own = static_cast<std::int64_t>(dominant_share * static_cast<double>(group));
  const std::int64_t other = num_classes > 1 ? (group - own) / (num_classes - 1) : 0;
  std::vector<std::int64_t> used(static_cast<std::size_t>(num_classes), 0);
  std::vector<torch::Tensor> pools;
  for (int k = 0; k < clusters; ++k) {
    std::vector<torch::Tensor> parts;
    for (int c = 0; c < num_classes; ++c) {
      // Own class first, then the others in class order (the official order; the pool is
      // shuffled again before it is cut into clients).
      const int label = c == 0 ? k : (c <= k ? c - 1 : c);
      const std::int64_t take = label == k ? own : other;
      auto& next = used[static_cast<std::size_t>(label)];
      parts.push_back(classes[static_cast<std::size_t>(label)].narrow(0, next, take));
      next += take;
    }
    pools.push_back(torch::cat(parts));
  }
  return pools;
}

}  // namespace

void check_dominant_share(double dominant_share) {
  if (!(dominant_share >= 0.0 && dominant_share <= 1.0)) {
    std::ostringstream found;
    found << dominant_share;
    throw ConfigError("PartitionSpec::dominant_share must be in [0, 1], but got " + found.str());
  }
}

std::vector<ClusterPool> label_skew_4_pools(const ImageDataset& dataset, int clusters,
                                            double dominant_share, std::uint64_t data_seed) {
  check_cluster_count(PartitionKind::kLabelSkew4, clusters, dataset.num_classes);
  check_dominant_share(dominant_share);
  std::vector<torch::Tensor> train = dominant_pools(dataset.train, dataset.num_classes, clusters,
                                                    dominant_share, data_seed, /*train=*/true);
  std::vector<torch::Tensor> test = dominant_pools(dataset.test, dataset.num_classes, clusters,
                                                   dominant_share, data_seed, /*train=*/false);
  std::vector<ClusterPool> pools(static_cast<std::size_t>(clusters));
  for (std::size_t k = 0; k < pools.size(); ++k) {
    pools[k].train = std::move(train[k]);
    pools[k].test = std::move(test[k]);
    pools[k].label_map = identity_label_map(dataset.num_classes);
  }
  return pools;
}

}  // namespace cflrun::data
