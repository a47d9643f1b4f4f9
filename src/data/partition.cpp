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

/// Throws ConfigError if the initial clusters plus the changes' new distributions exceed what the
/// partition kind allows.
void check_new_distributions(const PartitionSpec& spec, int num_classes) {
  const int max = max_clusters(spec.kind, num_classes);
  if (spec.new_distributions > 0 && spec.clusters + spec.new_distributions > max) {
    throw ConfigError("--changes introduces " + std::to_string(spec.new_distributions) +
                      " new cluster distribution(s) (appear, shift and split events) beside the " +
                      std::to_string(spec.clusters) + " of --clusters, but --partition " +
                      partition_name(spec.kind) + " allows at most " + std::to_string(max) +
                      " clusters (" + cluster_limit_reason(spec.kind, num_classes) +
                      "); lower --clusters or use fewer such events");
  }
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
  check_new_distributions(spec, dataset.num_classes);
  auto all_clusters = spec;  // the new distributions' pools are built with the initial ones
  all_clusters.clusters += spec.new_distributions;
  std::vector<ClusterPool> pools = cluster_pools(all_clusters, dataset);
  check_pool_capacity(spec, pools, /*train=*/true);
  check_pool_capacity(spec, pools, /*train=*/false);

  Partition partition{spec, {}, {}};
  if (spec.keep_cluster_pools || spec.new_distributions > 0 ||
      !spec.extra_client_clusters.empty()) {
    for (const auto& pool : pools) {
      partition.pools.push_back(std::make_shared<const ClusterPool>(pool));
    }
  }
  pools.resize(static_cast<std::size_t>(spec.clusters));  // the initial clusters' clients
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
  for (const int cluster : spec.extra_client_clusters) {  // the clients of appearing clusters
    partition.clients.push_back(
        moved_shard(partition, static_cast<int>(partition.clients.size()), cluster));
  }
  return partition;
}

ClientShard moved_shard(const Partition& partition, int client, int cluster) {
  const auto& spec = partition.spec;
  const auto at = static_cast<std::size_t>(client);
  if (at < partition.clients.size() && partition.clients[at].true_cluster == cluster) {
    return partition.clients[at];
  }
  const int clusters = static_cast<int>(partition.pools.size());
  if (cluster < 0 || cluster >= clusters) {
    throw ConfigError("moved_shard: cluster " + std::to_string(cluster) + " is not one of the " +
                      std::to_string(clusters) +
                      " cluster pools the partition keeps (an internal error)");
  }
  const ClusterPool& pool = *partition.pools[static_cast<std::size_t>(cluster)];
  const auto index = static_cast<std::uint64_t>(client) * static_cast<std::uint64_t>(clusters) +
                     static_cast<std::uint64_t>(cluster);
  const auto draw = [&](const torch::Tensor& indices, std::int64_t samples,
                        PartitionStream stream) {
    if (indices.size(0) < samples) {
      throw DataError(partition_name(spec.kind) + ": cluster " + std::to_string(cluster) +
                      "'s pool holds " + std::to_string(indices.size(0)) +
                      " samples, fewer than the " + std::to_string(samples) +
                      " a client moving into it takes; lower --train-samples/--test-samples");
    }
    const auto order =
        torch::randperm(indices.size(0), partition_generator(spec.data_seed, stream, index),
                        torch::kInt64)
            .narrow(0, 0, samples);
    const auto chosen = indices.index_select(0, order).contiguous();
    return std::vector<std::int64_t>(chosen.data_ptr<std::int64_t>(),
                                     chosen.data_ptr<std::int64_t>() + samples);
  };
  ClientShard shard;
  shard.client = client;
  shard.true_cluster = cluster;
  shard.train_indices = draw(pool.train, spec.train_samples, PartitionStream::kMovedClientTrain);
  shard.test_indices =
      draw(pool.test, test_samples_per_client(spec, pool), PartitionStream::kMovedClientTest);
  shard.rotation_quarters = pool.rotation_quarters;
  shard.label_map = pool.label_map;
  return shard;
}

}  // namespace cflrun::data
