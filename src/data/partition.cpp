#include <cflrun/data/partition.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include <cflrun/core/error.hpp>
#include <cflrun/data/cluster_pools.hpp>
#include <cflrun/data/dataset_registry.hpp>

namespace cflrun::data {
namespace {

constexpr int kFeatureSkewMaxClusters = 4;  // rotations by 0, 90, 180 and 270 degrees
constexpr int kClassesPerLabelSkew1Cluster = 2;
constexpr PartitionKind kAllKinds[] = {
    PartitionKind::kLabelSkew1, PartitionKind::kConceptShift,    PartitionKind::kFeatureSkew,
    PartitionKind::kLabelSkew2, PartitionKind::kLabelSkew3,      PartitionKind::kLabelSkew4,
    PartitionKind::kRotation,   PartitionKind::kClassPerCluster,
};

std::string cluster_limit_reason(PartitionKind kind, int num_classes) {
  const std::string classes = std::to_string(num_classes);
  switch (kind) {
    case PartitionKind::kLabelSkew1:
      return "two classes per cluster out of " + classes;
    case PartitionKind::kConceptShift:
      return "distinct label maps made of two disjoint swaps of " + classes + " classes";
    case PartitionKind::kFeatureSkew:
      return "one rotation by 0, 90, 180 or 270 degrees per cluster";
    case PartitionKind::kLabelSkew2:
      return "Fisher's inequality: at most " + classes +
             " label sets pairwise share the same number of labels";
    case PartitionKind::kLabelSkew3:
      return "one missing class per cluster out of " + classes + ", plus one cluster with all";
    case PartitionKind::kLabelSkew4:
      return "one dominant class per cluster out of " + classes;
    case PartitionKind::kRotation:
      return "IFCA's rotations: 1 cluster unrotated, 2 by 0 and 180 degrees, 4 by multiples of 90";
    case PartitionKind::kClassPerCluster:
      return "one class per cluster out of " + classes;
  }
  return {};
}

void require_positive(std::int64_t value, const std::string& flag) {
  if (value < 1) {
    throw ConfigError(flag + " must be at least 1, but got " + std::to_string(value));
  }
}

/// Throws the DataError of the cluster with the smallest pool of one split if that pool cannot give
/// every client `samples` indices without replacement.
void check_pool_capacity(const PartitionSpec& spec, const std::vector<ClusterPool>& pools,
                         bool train) {
  const auto pool_size = [train](const ClusterPool& pool) {
    return (train ? pool.train : pool.test).size(0);
  };
  const auto smallest = std::min_element(
      pools.begin(), pools.end(),
      [&](const ClusterPool& a, const ClusterPool& b) { return pool_size(a) < pool_size(b); });
  const std::int64_t size = pool_size(*smallest);
  const std::int64_t per_client = size / spec.clients_per_cluster;
  const std::int64_t samples = train ? spec.train_samples : spec.test_samples;
  if (!train && spec.official_fidelity) {
    if (per_client >= 1) {
      return;  // official: each client gets min(per_client, train_samples) test samples
    }
    throw DataError(partition_name(spec.kind) + ": cluster " +
                    std::to_string(smallest - pools.begin()) + " has " + std::to_string(size) +
                    " test samples, fewer than its " + std::to_string(spec.clients_per_cluster) +
                    " clients; lower --clients-per-cluster");
  }
  if (samples <= per_client) {
    return;
  }
  const std::string flag = train ? "--train-samples" : "--test-samples";
  throw DataError(
      partition_name(spec.kind) + ": cluster " + std::to_string(smallest - pools.begin()) +
      " has " + std::to_string(size) + (train ? " training" : " test") +
      " samples, enough for at most " + std::to_string(per_client) + " per client with " +
      std::to_string(spec.clients_per_cluster) + " clients per cluster, but " + flag + " is " +
      std::to_string(samples) + "; lower " + flag + " or --clients-per-cluster");
}

/// --test-samples, or under official fidelity min(test pool // clients per cluster,
/// --train-samples) (official assign_data_to_clients_RR_without_replacement with its
/// datapoints_per_client cap).
std::int64_t test_samples_per_client(const PartitionSpec& spec, const ClusterPool& pool) {
  if (!spec.official_fidelity) {
    return spec.test_samples;
  }
  return std::min(pool.test.size(0) / spec.clients_per_cluster, spec.train_samples);
}

/// Whether the official code's label permutations apply to `dataset` (its registered source says
/// so; a dataset of no registered source, as the tests build, has none).
bool official_code_permutes_labels(const ImageDataset& dataset) {
  const DatasetSource* source = find_dataset_or_null(dataset.name);
  return source != nullptr && source->official_code_permutes_labels();
}

}  // namespace

std::vector<std::string> partition_names() {
  std::vector<std::string> names;
  for (const PartitionKind kind : kAllKinds) {
    names.push_back(partition_name(kind));
  }
  return names;
}

PartitionKind parse_partition_kind(const std::string& name) {
  std::string names;
  for (const PartitionKind kind : kAllKinds) {
    if (name == partition_name(kind)) {
      return kind;
    }
    names += (names.empty() ? "" : ", ") + partition_name(kind);
  }
  throw ConfigError("--partition must be one of " + names + ", but got '" + name + "'");
}

std::string partition_name(PartitionKind kind) {
  switch (kind) {
    case PartitionKind::kLabelSkew1:
      return "label_skew_1";
    case PartitionKind::kConceptShift:
      return "concept_shift";
    case PartitionKind::kFeatureSkew:
      return "feature_skew";
    case PartitionKind::kLabelSkew2:
      return "label_skew_2";
    case PartitionKind::kLabelSkew3:
      return "label_skew_3";
    case PartitionKind::kLabelSkew4:
      return "label_skew_4";
    case PartitionKind::kRotation:
      return "rotation";
    case PartitionKind::kClassPerCluster:
      return "class_per_cluster";
  }
  throw ConfigError("partition_name: unknown PartitionKind value " +
                    std::to_string(static_cast<int>(kind)));
}

int max_clusters(PartitionKind kind, int num_classes) {
  switch (kind) {
    case PartitionKind::kLabelSkew1:
      return num_classes / kClassesPerLabelSkew1Cluster;
    case PartitionKind::kConceptShift: {
      // Choose the first pair, then a disjoint second one; the pair order does not matter.
      const int n = num_classes;
      return n < 4 ? 0 : (n * (n - 1) / 2) * ((n - 2) * (n - 3) / 2) / 2;
    }
    case PartitionKind::kFeatureSkew:
      return kFeatureSkewMaxClusters;
    case PartitionKind::kLabelSkew2:
      // Sets pairwise meeting in exactly V >= 1 elements number at most n (nonuniform Fisher
      // inequality); V = 0 is checked in validate_label_sets.
      return num_classes;
    case PartitionKind::kLabelSkew3:
      return num_classes + 1;
    case PartitionKind::kLabelSkew4:
      return num_classes;
    case PartitionKind::kRotation:
      return kFeatureSkewMaxClusters;
    case PartitionKind::kClassPerCluster:
      return num_classes;
  }
  return 0;
}

void check_cluster_count(PartitionKind kind, int clusters, int num_classes) {
  const int max = max_clusters(kind, num_classes);
  if (clusters < 1 || clusters > max) {
    throw ConfigError("--clusters must be between 1 and " + std::to_string(max) +
                      " for --partition " + partition_name(kind) + " (" +
                      cluster_limit_reason(kind, num_classes) + "), but got " +
                      std::to_string(clusters));
  }
}

void validate_partition_spec(const PartitionSpec& spec, int num_classes) {
  check_cluster_count(spec.kind, spec.clusters, num_classes);
  require_positive(spec.clients_per_cluster, "--clients-per-cluster");
  require_positive(spec.train_samples, "--train-samples");
  require_positive(spec.test_samples, "--test-samples");
  if (spec.kind == PartitionKind::kLabelSkew2) {
    check_label_skew_2_settings(spec.clusters, num_classes, spec.labels_per_cluster,
                                spec.shared_labels);
  }
  if (spec.kind == PartitionKind::kLabelSkew2 || spec.kind == PartitionKind::kLabelSkew3) {
    check_class_split_settings(class_split_settings(spec, /*train=*/true));
    check_class_split_settings(class_split_settings(spec, /*train=*/false));
  }
  if (spec.kind == PartitionKind::kLabelSkew4) {
    check_dominant_share(spec.dominant_share);
  }
}

std::vector<int> Partition::true_clusters() const {
  std::vector<int> clusters;
  clusters.reserve(clients.size());
  for (const ClientShard& shard : clients) {
    clusters.push_back(shard.true_cluster);
  }
  return clusters;
}

std::vector<std::int64_t> identity_label_map(int num_classes) {
  std::vector<std::int64_t> map(static_cast<std::size_t>(std::max(num_classes, 0)));
  std::iota(map.begin(), map.end(), std::int64_t{0});
  return map;
}

std::vector<ClusterPool> cluster_pools(const PartitionSpec& spec, const ImageDataset& dataset) {
  switch (spec.kind) {
    case PartitionKind::kLabelSkew1:
      return label_skew_1_pools(dataset, spec.clusters);
    case PartitionKind::kConceptShift:
      return concept_shift_pools(
          dataset, spec.clusters, spec.effective_pool_seed(),
          spec.official_fidelity ? official_concept_shift_share() : ClassShare{});
    case PartitionKind::kFeatureSkew:
      return spec.official_fidelity && official_code_permutes_labels(dataset)
                 ? label_permutation_pools(dataset, spec.clusters, spec.effective_pool_seed())
                 : feature_skew_pools(dataset, spec.clusters);
    case PartitionKind::kLabelSkew2:
      return label_skew_2_pools(spec, dataset);
    case PartitionKind::kLabelSkew3:
      return label_skew_3_pools(spec, dataset);
    case PartitionKind::kLabelSkew4:
      return label_skew_4_pools(dataset, spec.clusters, spec.dominant_share,
                                spec.effective_pool_seed());
    case PartitionKind::kRotation:
      return rotation_pools(dataset, spec.clusters);
    case PartitionKind::kClassPerCluster:
      return class_per_cluster_pools(dataset, spec.clusters);
  }
  throw ConfigError("cluster_pools: unknown PartitionKind value " +
                    std::to_string(static_cast<int>(spec.kind)));
}

Partition make_partition(const PartitionSpec& spec, const ImageDataset& dataset) {
  validate_partition_spec(spec, dataset.num_classes);
  std::vector<ClusterPool> pools = cluster_pools(spec, dataset);
  check_pool_capacity(spec, pools, /*train=*/true);
  check_pool_capacity(spec, pools, /*train=*/false);

  Partition partition{spec, {}};
  partition.clients.reserve(pools.size() * static_cast<std::size_t>(spec.clients_per_cluster));
  for (std::size_t k = 0; k < pools.size(); ++k) {
    auto train = split_among_clients(
        pools[k].train, spec.clients_per_cluster, spec.train_samples,
        partition_generator(spec.data_seed, PartitionStream::kClientSplitTrain, k));
    auto test = split_among_clients(
        pools[k].test, spec.clients_per_cluster, test_samples_per_client(spec, pools[k]),
        partition_generator(spec.data_seed, PartitionStream::kClientSplitTest, k));
    for (int w = 0; w < spec.clients_per_cluster; ++w) {
      ClientShard shard;
      shard.client = static_cast<int>(partition.clients.size());
      shard.true_cluster = static_cast<int>(k);
      shard.train_indices = std::move(train[w]);
      shard.test_indices = std::move(test[w]);
      shard.rotation_quarters = pools[k].rotation_quarters;
      shard.label_map = pools[k].label_map;
      partition.clients.push_back(std::move(shard));
    }
  }
  return partition;
}

}  // namespace cflrun::data
