#include <cflrun/run/client_data_setup.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include <cflrun/data/cluster_pools.hpp>
#include <cflrun/data/linear_regression.hpp>
#include <cflrun/data/mixture.hpp>

namespace cflrun::run {
namespace {

data::MixtureSpec mixture_spec(const cli::RunOptions& options) {
  data::MixtureSpec spec;
  spec.pattern = data::parse_mixture_pattern(options.partition);
  spec.source_kind = data::parse_source_kind(options.mixture_sources);
  spec.sources = options.clusters;
  spec.clients_per_source = options.clients_per_cluster;
  spec.max_train_samples = options.train_samples;
  spec.min_train_samples = options.min_train_samples > 0 ? options.min_train_samples : options.train_samples;
  spec.test_samples = options.test_samples;
  spec.holdout_samples = options.holdout_samples;
  spec.data_seed = options.effective_data_seed();
  return spec;
}

/// The dataset in `dir`, loaded once per process: `cflrun check` dry-runs many configs of the same
/// data, and a run loads it once anyway. Not thread-safe (setup runs on the main thread).
std::shared_ptr<const data::ImageDataset> shared_dataset(data::DatasetKind kind, const std::filesystem::path& dir) {
  static std::map<std::pair<data::DatasetKind, std::filesystem::path>, std::shared_ptr<const data::ImageDataset>> loaded;
  auto& entry = loaded[{kind, dir}];
  if (!entry) {
    entry = std::make_shared<const data::ImageDataset>(data::load_image_dataset(kind, dir));
  }
  return entry;
}

data::ClientData image_client_data(const cli::RunOptions& options) {
  const auto kind = data::parse_dataset_kind(options.dataset);
  const auto dir = options.data_dir.empty() ? data::default_data_dir(kind) : std::filesystem::path(options.data_dir);
  auto dataset = shared_dataset(kind, dir);
  if (options.official_fidelity() && kind == data::DatasetKind::kCifar10) {
    auto relabelled = std::make_shared<data::ImageDataset>(*dataset);  // shares the images, new labels
    data::shuffle_class_order(*relabelled, options.effective_pool_seed());
    dataset = std::move(relabelled);
  }
  if (data::is_mixture_partition(options.partition)) {
    return data::mixture_image_data(std::move(dataset), mixture_spec(options));
  }
  data::PartitionSpec spec;
  spec.kind = data::parse_partition_kind(options.partition);
  spec.clusters = options.clusters;
  spec.clients_per_cluster = options.clients_per_cluster;
  spec.train_samples = options.train_samples;
  spec.test_samples = options.test_samples;
  spec.data_seed = options.effective_data_seed();
  spec.pool_seed = options.effective_pool_seed();
  spec.official_fidelity = options.official_fidelity();
  if (!options.label_sets.empty()) {
    spec.label_sets = data::parse_label_sets(options.label_sets, options.clusters, dataset->num_classes);
  }
  if (!options.train_class_counts.empty()) {
    spec.train_class_counts = data::parse_class_counts(options.train_class_counts, "train-class-counts",
                                                       options.clusters, dataset->num_classes);
  }
  if (!options.test_class_counts.empty()) {
    spec.test_class_counts = data::parse_class_counts(options.test_class_counts, "test-class-counts",
                                                      options.clusters, dataset->num_classes);
  }
  if (options.min_cluster_train > 0) {
    spec.min_cluster_train_samples = options.min_cluster_train;
  }
  if (options.min_cluster_test > 0) {
    spec.min_cluster_test_samples = options.min_cluster_test;
  }
  auto partition = data::make_partition(spec, *dataset);
  return data::partitioned_client_data(std::move(dataset), std::move(partition));
}

data::ClientData linear_regression_client_data(const cli::RunOptions& options) {
  data::LinearRegressionSpec spec;
  spec.clusters = options.clusters;
  spec.clients_per_cluster = options.clients_per_cluster;
  spec.train_samples = options.train_samples;
  spec.test_samples = options.test_samples;
  spec.dimension = options.dimension;
  spec.separation = options.separation;
  spec.noise = options.noise;
  spec.model_std = options.model_std;
  spec.data_seed = options.effective_data_seed();
  if (data::is_mixture_partition(options.partition)) {
    return data::mixture_linear_regression_data(spec, mixture_spec(options));
  }
  return data::linear_regression_data(spec);
}

}  // namespace

data::ClientData load_client_data(const cli::RunOptions& options) {
  return options.dataset == "linreg" ? linear_regression_client_data(options) : image_client_data(options);
}

model::Objective objective_of(const cli::RunOptions& options) {
  if (options.unsupervised) {
    return model::Objective::kReconstruction;
  }
  return options.dataset == "linreg" ? model::Objective::kRegression : model::Objective::kClassification;
}

model::Architecture architecture_of(const cli::RunOptions& options) {
  return model::parse_architecture(options.effective_model());
}

model::NetworkShape network_shape_of(const data::ClientData& data) {
  model::NetworkShape shape;
  shape.sample_shape = data.sample_shape;
  shape.num_classes = data.num_classes;
  return shape;
}

}  // namespace cflrun::run
