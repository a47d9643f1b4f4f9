#include <cflrun/run/client_data_setup.hpp>

#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/data/linear_regression.hpp>
#include <cflrun/data/mixture.hpp>
#include <cflrun/run/population/population_schedule.hpp>

namespace cflrun::run {
namespace {

data::MixtureSpec mixture_spec(const cli::RunOptions& options) {
  data::MixtureSpec spec;
  spec.pattern = data::parse_mixture_pattern(options.partition);
  spec.source_kind = options.mixture_sources;
  spec.sources = options.clusters;
  spec.clients_per_source = options.clients_per_cluster;
  spec.max_train_samples = options.train_samples;
  spec.min_train_samples =
      options.min_train_samples > 0 ? options.min_train_samples : options.train_samples;
  spec.test_samples = options.test_samples;
  spec.holdout_samples = options.holdout_samples;
  spec.data_seed = options.effective_data_seed();
  return spec;
}

/// The partition of image data but its kind: sizes, seeds and fidelity (label sets and class
/// counts are parsed by the source, which knows the class count).
data::PartitionSpec partition_spec(const cli::RunOptions& options) {
  data::PartitionSpec spec;
  spec.clusters = options.clusters;
  spec.clients_per_cluster = options.clients_per_cluster;
  spec.train_samples = options.train_samples;
  spec.test_samples = options.test_samples;
  spec.data_seed = options.effective_data_seed();
  spec.pool_seed = options.effective_pool_seed();
  spec.official_fidelity = options.official_fidelity();
  if (options.min_cluster_train > 0) {
    spec.min_cluster_train_samples = options.min_cluster_train;
  }
  if (options.min_cluster_test > 0) {
    spec.min_cluster_test_samples = options.min_cluster_test;
  }
  const auto population = population_changes_spec(options);  // new distributions, newcomers
  spec.keep_cluster_pools = !population.changes.empty();
  spec.new_distributions = population.new_distributions();
  spec.extra_client_clusters = population.extra_client_clusters();
  return spec;
}

/// Generated regression data (--dataset linreg).
data::LinearRegressionSpec regression_spec(const cli::RunOptions& options) {
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
  return spec;
}

}  // namespace

data::DataRequest data_request(const cli::RunOptions& options) {
  data::DataRequest request;
  request.data_dir = options.data_dir;
  request.partition = options.partition;
  request.partition_spec = partition_spec(options);
  if (data::is_mixture_partition(options.partition)) {
    request.mixture = mixture_spec(options);
  } else {
    request.partition_spec.kind = data::parse_partition_kind(options.partition);
  }
  request.label_sets = options.label_sets;
  request.train_class_counts = options.train_class_counts;
  request.test_class_counts = options.test_class_counts;
  request.regression = regression_spec(options);
  return request;
}

data::ClientData load_client_data(const cli::RunOptions& options) {
  return data::find_dataset(options.dataset).client_data(data_request(options));
}

model::Objective objective_of(const cli::RunOptions& options) {
  if (options.unsupervised) {
    return model::Objective::kReconstruction;
  }
  return data::find_dataset(options.dataset).targets() == data::TargetKind::kRealValues
             ? model::Objective::kRegression
             : model::Objective::kClassification;
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
