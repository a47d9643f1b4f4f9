#include <cflrun/data/cluster_pools.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

#include "integer_rows.hpp"

namespace cflrun::data {
namespace {

/// Rejection draws per cluster before a restart: a dead end is declared when none of them fits.
/// With 10 classes and U = 4 there are 210 candidate sets, so a cluster with even one fitting
/// candidate misses it in 10 000 draws with probability (209/210)^10000 < 1e-20.
constexpr int kDrawsPerCluster = 10000;
/// Restarts from cluster 0 after a dead end (about 1 greedy pass in 100 for K = 5, U = 4, V = 2).
constexpr int kRestarts = 100;

/// Membership flags of one label set: [num_classes], 1 where the class is in the set.
using Membership = std::vector<char>;

/// U distinct labels, uniform: the first U entries of a partial Fisher-Yates shuffle of `labels`.
std::vector<std::int64_t> draw_labels(std::mt19937_64& engine, std::vector<std::int64_t>& labels,
                                      int count) {
  core::shuffle_prefix(engine, labels, static_cast<std::size_t>(count));
  return {labels.begin(), labels.begin() + count};
}

bool shares_exactly(const std::vector<std::int64_t>& candidate,
                    const std::vector<Membership>& earlier, int shared) {
  return std::all_of(earlier.begin(), earlier.end(), [&](const Membership& set) {
    const auto common = std::count_if(candidate.begin(), candidate.end(), [&](std::int64_t c) {
      return set[static_cast<std::size_t>(c)] != 0;
    });
    return common == shared;
  });
}

/// One greedy pass, cluster by cluster; false at a dead end.
bool draw_all(std::mt19937_64& engine, int clusters, int num_classes, int labels_per_cluster,
              int shared_labels, LabelSets& sets) {
  std::vector<std::int64_t> labels(static_cast<std::size_t>(num_classes));
  std::iota(labels.begin(), labels.end(), std::int64_t{0});
  std::vector<Membership> earlier;
  sets.clear();
  for (int k = 0; k < clusters; ++k) {
    bool accepted = false;
    for (int draw = 0; draw < kDrawsPerCluster && !accepted; ++draw) {
      std::vector<std::int64_t> candidate = draw_labels(engine, labels, labels_per_cluster);
      if (shares_exactly(candidate, earlier, shared_labels)) {
        Membership member(static_cast<std::size_t>(num_classes), 0);
        for (const std::int64_t c : candidate) {
          member[static_cast<std::size_t>(c)] = 1;
        }
        earlier.push_back(std::move(member));
        std::sort(candidate.begin(), candidate.end());
        sets.push_back(std::move(candidate));
        accepted = true;
      }
    }
    if (!accepted) {
      return false;
    }
  }
  return true;
}

}  // namespace

void check_label_skew_2_settings(int clusters, int num_classes, int labels_per_cluster,
                                 int shared_labels) {
  check_cluster_count(PartitionKind::kLabelSkew2, clusters, num_classes);
  if (labels_per_cluster < 1 || labels_per_cluster > num_classes) {
    throw ConfigError("PartitionSpec::labels_per_cluster (U) must be between 1 and " +
                      std::to_string(num_classes) + " (the number of classes), but got " +
                      std::to_string(labels_per_cluster));
  }
  if (shared_labels < 0 || shared_labels >= labels_per_cluster) {
    throw ConfigError("PartitionSpec::shared_labels (V) must be between 0 and U - 1 = " +
                      std::to_string(labels_per_cluster - 1) + ", but got " +
                      std::to_string(shared_labels));
  }
  if (shared_labels == 0 && clusters > num_classes / labels_per_cluster) {
    throw ConfigError(
        "--clusters must be at most " + std::to_string(num_classes / labels_per_cluster) +
        " for --partition label_skew_2 with disjoint label sets (V = 0) of " +
        std::to_string(labels_per_cluster) + " out of " + std::to_string(num_classes) +
        " classes, but got " + std::to_string(clusters));
  }
}

LabelSets label_skew_2_label_sets(int clusters, int num_classes, int labels_per_cluster,
                                  int shared_labels, std::uint64_t data_seed) {
  check_label_skew_2_settings(clusters, num_classes, labels_per_cluster, shared_labels);
  std::mt19937_64 engine =
      core::make_engine(data_seed, core::Purpose::kPartition, 0,
                        static_cast<std::uint64_t>(PartitionStream::kLabelAssignment));
  LabelSets sets;
  for (int restart = 0; restart < kRestarts; ++restart) {
    if (draw_all(engine, clusters, num_classes, labels_per_cluster, shared_labels, sets)) {
      return sets;
    }
  }
  throw ConfigError("--partition label_skew_2 could not draw " + std::to_string(clusters) +
                    " label sets of U = " + std::to_string(labels_per_cluster) + " out of " +
                    std::to_string(num_classes) + " classes with every two sharing exactly V = " +
                    std::to_string(shared_labels) + " labels (" + std::to_string(kRestarts) +
                    " restarts of " + std::to_string(kDrawsPerCluster) +
                    " draws per cluster); lower --clusters (the paper uses 5)");
}

LabelSets parse_label_sets(const std::string& text, int clusters, int num_classes) {
  const auto fail = [&](const std::string& problem) {
    return ConfigError("--label-sets '" + text + "': " + problem + "; give " +
                       std::to_string(clusters) + " sets of labels in [0, " +
                       std::to_string(num_classes) +
                       "), sets separated by '/', labels by ',' (e.g. 2,4,6,9/0,2,3,4/...)");
  };
  LabelSets sets = parse_integer_rows(text, fail);
  for (std::vector<std::int64_t>& set : sets) {
    for (const std::int64_t label : set) {
      if (label < 0 || label >= num_classes) {
        throw fail(std::to_string(label) + " is not a label");
      }
      if (std::count(set.begin(), set.end(), label) > 1) {
        throw fail("label " + std::to_string(label) + " twice in one set");
      }
    }
    std::sort(set.begin(), set.end());
  }
  if (static_cast<int>(sets.size()) != clusters) {
    throw fail(std::to_string(sets.size()) + " sets for " + std::to_string(clusters) + " clusters");
  }
  return sets;
}

std::vector<ClusterPool> label_skew_2_pools(const PartitionSpec& spec,
                                            const ImageDataset& dataset) {
  // One label assignment for both splits: the official code draws it once and passes it to the
  // train and the test partition.
  const LabelSets sets =
      !spec.label_sets.empty()
          ? spec.label_sets
          : label_skew_2_label_sets(spec.clusters, dataset.num_classes, spec.labels_per_cluster,
                                    spec.shared_labels, spec.effective_pool_seed());
  return class_split_pools(spec, dataset, sets);
}

}  // namespace cflrun::data
