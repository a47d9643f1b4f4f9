#include <cflrun/data/cluster_pools.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

/// Reserve fractions within this distance below 1 count as 1 (0.1 + 18 x 0.05 is not exactly 1).
constexpr double kReserveTolerance = 1e-9;

std::string real(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void require_setting(bool ok, const std::string& field, const std::string& expected,
                     const std::string& found) {
  if (!ok) {
    throw ConfigError(field + " must be " + expected + ", but got " + found);
  }
}

/// holders[c]: the clusters whose label set holds class c, ascending (official class_to_parties).
std::vector<std::vector<int>> class_holders(const LabelSets& label_sets, int num_classes) {
  std::vector<std::vector<int>> holders(static_cast<std::size_t>(num_classes));
  for (std::size_t k = 0; k < label_sets.size(); ++k) {
    for (const std::int64_t c : label_sets[k]) {
      if (c < 0 || c >= num_classes) {
        throw ConfigError("split_classes_among_clusters: cluster " + std::to_string(k) +
                          " holds class " + std::to_string(c) + ", outside [0, " +
                          std::to_string(num_classes) + ")");
      }
      holders[static_cast<std::size_t>(c)].push_back(static_cast<int>(k));
    }
  }
  return holders;
}

/// The cut points of `rest` indices by Dirichlet proportions: numpy's
/// (cumsum(p) * rest).astype(int)[:-1], with rest appended as the last end.
std::vector<std::int64_t> dirichlet_ends(std::int64_t rest, std::size_t holders, double alpha,
                                         at::Generator& generator) {
  const torch::Tensor alphas =
      torch::full({static_cast<std::int64_t>(holders)}, alpha, torch::kFloat64);
  const torch::Tensor cumulative = torch::_sample_dirichlet(alphas, generator).cumsum(0);
  const auto shares = cumulative.accessor<double, 1>();
  std::vector<std::int64_t> ends(holders, rest);
  std::int64_t previous = 0;
  for (std::size_t j = 0; j + 1 < holders; ++j) {
    const auto cut =
        static_cast<std::int64_t>(shares[static_cast<std::int64_t>(j)] * static_cast<double>(rest));
    ends[j] = std::clamp(cut, previous, rest);
    previous = ends[j];
  }
  return ends;
}

/// One attempt: every held class shuffled, its reserve cut evenly and the rest by Dirichlet shares.
std::vector<std::vector<torch::Tensor>> split_once(const std::vector<torch::Tensor>& class_indices,
                                                   const std::vector<std::vector<int>>& holders,
                                                   std::size_t clusters, double reserve,
                                                   double alpha, at::Generator generator) {
  std::vector<std::vector<torch::Tensor>> parts(clusters);
  for (std::size_t c = 0; c < class_indices.size(); ++c) {
    const std::vector<int>& owners = holders[c];
    if (owners.empty()) {
      continue;  // held by nobody: dropped, as in the official code
    }
    const std::int64_t count = class_indices[c].size(0);
    const torch::Tensor shuffled =
        class_indices[c].index_select(0, torch::randperm(count, generator, torch::kInt64));
    const auto reserved = static_cast<std::int64_t>(
        std::floor(static_cast<double>(count) * reserve + kReserveTolerance));
    const std::int64_t rest = count - reserved;
    const auto holder_count = static_cast<std::int64_t>(owners.size());
    const std::vector<std::int64_t> ends = dirichlet_ends(rest, owners.size(), alpha, generator);
    std::int64_t start = 0;
    for (std::size_t j = 0; j < owners.size(); ++j) {
      // The official order within a class: the Dirichlet share first, then the reserve share.
      parts[static_cast<std::size_t>(owners[j])].push_back(
          shuffled.narrow(0, reserved + start, ends[j] - start));
      start = ends[j];
    }
    std::int64_t reserve_start = 0;
    for (std::size_t j = 0; j < owners.size(); ++j) {
      // numpy.array_split: the first reserved % H holders get one index more.
      const std::int64_t length = reserved / holder_count +
                                  (static_cast<std::int64_t>(j) < reserved % holder_count ? 1 : 0);
      parts[static_cast<std::size_t>(owners[j])].push_back(
          shuffled.narrow(0, reserve_start, length));
      reserve_start += length;
    }
  }
  return parts;
}

std::vector<torch::Tensor> concatenate(const std::vector<std::vector<torch::Tensor>>& parts) {
  std::vector<torch::Tensor> pools;
  pools.reserve(parts.size());
  for (const auto& cluster_parts : parts) {
    pools.push_back(cluster_parts.empty() ? torch::empty({0}, torch::kInt64)
                                          : torch::cat(cluster_parts));
  }
  return pools;
}

/// The DataError of a split whose smallest pool stays below the minimum with the reserve at 1.
[[noreturn]] void throw_below_minimum(const PartitionSpec& spec, const ClassSplit& split,
                                      bool train) {
  const auto smallest = std::min_element(
      split.pools.begin(), split.pools.end(),
      [](const torch::Tensor& a, const torch::Tensor& b) { return a.size(0) < b.size(0); });
  const std::string flag = train ? "--train-samples" : "--test-samples";
  const std::string field = train ? "min_cluster_train_samples" : "min_cluster_test_samples";
  const std::int64_t samples = train ? spec.train_samples : spec.test_samples;
  const std::int64_t minimum =
      train
          ? spec.min_cluster_train_samples.value_or(official_min_cluster_samples(spec.kind, true))
          : spec.min_cluster_test_samples.value_or(official_min_cluster_samples(spec.kind, false));
  throw DataError(
      partition_name(spec.kind) + ": cluster " + std::to_string(smallest - split.pools.begin()) +
      " gets " + std::to_string(smallest->size(0)) + (train ? " training" : " test") +
      " samples even with the reserve at " + real(split.reserve) +
      " (every class split evenly among the clusters holding it), but needs " +
      std::to_string(min_cluster_samples(spec, train)) + " (the larger of the cluster minimum " +
      std::to_string(minimum) + " and --clients-per-cluster x " + flag + " = " +
      std::to_string(spec.clients_per_cluster * samples) + "); lower " + flag +
      " or --clients-per-cluster, or PartitionSpec::" + field);
}

/// One split by the reserve + Dirichlet routine; DataError if it never meets its minimum.
ClassSplit drawn_split(const PartitionSpec& spec, const ImageDataset& dataset,
                       const LabelSets& label_sets, bool train) {
  ClassSplit split = split_classes_among_clusters(
      (train ? dataset.train : dataset.test).labels, dataset.num_classes, label_sets,
      class_split_settings(spec, train), spec.effective_pool_seed(),
      train ? PartitionStream::kClassSplitTrain : PartitionStream::kClassSplitTest);
  if (!split.met_minimum) {
    throw_below_minimum(spec, split, train);
  }
  return split;
}

/// One split by given class counts; DataError if a pool is below the split's minimum.
ClassSplit counted_split(const PartitionSpec& spec, const ImageDataset& dataset,
                         const LabelSets& label_sets, const ClassCounts& counts, bool train) {
  const std::string option = train ? "train-class-counts" : "test-class-counts";
  ClassSplit split;
  split.pools = split_classes_by_counts(
      (train ? dataset.train : dataset.test).labels, dataset.num_classes, label_sets, counts,
      spec.effective_pool_seed(),
      train ? PartitionStream::kClassSplitTrain : PartitionStream::kClassSplitTest, option);
  const std::int64_t minimum = min_cluster_samples(spec, train);
  for (std::size_t k = 0; k < split.pools.size(); ++k) {
    if (split.pools[k].size(0) < minimum) {
      throw DataError(partition_name(spec.kind) + ": cluster " + std::to_string(k) + " gets " +
                      std::to_string(split.pools[k].size(0)) + " samples by --" + option +
                      ", but needs " + std::to_string(minimum) +
                      " (the cluster minimum, or --clients-per-cluster x samples per client); "
                      "raise its counts or lower the samples per client");
    }
  }
  split.met_minimum = true;
  return split;
}

}  // namespace

std::int64_t official_min_cluster_samples(PartitionKind kind, bool train) {
  switch (kind) {
    case PartitionKind::kLabelSkew2:
      return train ? 5100 : 510;  // official exp201 N_train, N_test
    case PartitionKind::kLabelSkew3:
      return train ? 6000 : 750;  // official exp202 N_train, N_test
    default:
      return 0;
  }
}

std::int64_t min_cluster_samples(const PartitionSpec& spec, bool train) {
  const std::optional<std::int64_t>& set =
      train ? spec.min_cluster_train_samples : spec.min_cluster_test_samples;
  const std::int64_t samples = train ? spec.train_samples : spec.test_samples;
  const std::int64_t minimum = set.value_or(official_min_cluster_samples(spec.kind, train));
  if (!train && spec.official_fidelity) {
    return minimum;  // official test sizes follow the pools (test_samples is not used)
  }
  return std::max(minimum, spec.clients_per_cluster * samples);
}

ClassSplitSettings class_split_settings(const PartitionSpec& spec, bool train) {
  const std::optional<std::int64_t>& set =
      train ? spec.min_cluster_train_samples : spec.min_cluster_test_samples;
  require_setting(!set || *set >= 0,
                  train ? "PartitionSpec::min_cluster_train_samples"
                        : "PartitionSpec::min_cluster_test_samples",
                  "at least 0", set ? std::to_string(*set) : "");
  ClassSplitSettings settings;
  settings.dirichlet_alpha = spec.dirichlet_alpha;
  settings.reserve_start = spec.reserve_start;
  settings.reserve_step = spec.reserve_step;
  settings.min_cluster_samples = min_cluster_samples(spec, train);
  return settings;
}

void check_class_split_settings(const ClassSplitSettings& settings) {
  require_setting(settings.dirichlet_alpha > 0.0, "PartitionSpec::dirichlet_alpha", "positive",
                  real(settings.dirichlet_alpha));
  require_setting(settings.reserve_start >= 0.0 && settings.reserve_start <= 1.0,
                  "PartitionSpec::reserve_start", "in [0, 1]", real(settings.reserve_start));
  require_setting(settings.reserve_step > 0.0, "PartitionSpec::reserve_step", "positive",
                  real(settings.reserve_step));
  require_setting(settings.min_cluster_samples >= 0, "ClassSplitSettings::min_cluster_samples",
                  "at least 0", std::to_string(settings.min_cluster_samples));
}

ClassSplit split_classes_among_clusters(const torch::Tensor& labels, int num_classes,
                                        const LabelSets& label_sets,
                                        const ClassSplitSettings& settings, std::uint64_t data_seed,
                                        PartitionStream stream) {
  check_class_split_settings(settings);
  const std::vector<std::vector<int>> holders = class_holders(label_sets, num_classes);
  std::vector<torch::Tensor> class_indices;
  for (int c = 0; c < num_classes; ++c) {
    class_indices.push_back(torch::nonzero(labels.eq(c)).flatten());
  }
  ClassSplit split;
  for (std::uint64_t attempt = 0;; ++attempt) {
    split.reserve = std::min(
        1.0, settings.reserve_start + static_cast<double>(attempt) * settings.reserve_step);
    if (split.reserve > 1.0 - kReserveTolerance) {
      split.reserve = 1.0;
    }
    split.pools = concatenate(split_once(class_indices, holders, label_sets.size(), split.reserve,
                                         settings.dirichlet_alpha,
                                         partition_generator(data_seed, stream, attempt)));
    split.met_minimum = std::all_of(
        split.pools.begin(), split.pools.end(),
        [&](const torch::Tensor& pool) { return pool.size(0) >= settings.min_cluster_samples; });
    if (split.met_minimum || split.reserve == 1.0) {
      return split;
    }
  }
}

std::vector<ClusterPool> class_split_pools(const PartitionSpec& spec, const ImageDataset& dataset,
                                           const LabelSets& label_sets) {
  std::vector<ClusterPool> pools(label_sets.size());
  for (const bool train : {true, false}) {
    const ClassCounts& counts = train ? spec.train_class_counts : spec.test_class_counts;
    ClassSplit split = counts.empty() ? drawn_split(spec, dataset, label_sets, train)
                                      : counted_split(spec, dataset, label_sets, counts, train);
    for (std::size_t k = 0; k < pools.size(); ++k) {
      (train ? pools[k].train : pools[k].test) = std::move(split.pools[k]);
      pools[k].label_map = identity_label_map(dataset.num_classes);
    }
  }
  return pools;
}

}  // namespace cflrun::data
