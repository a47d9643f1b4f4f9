#pragma once
/// @file
/// From run options to the clients' data, the objective and the model shape of a run.

#include <cflrun/cli/run_options.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/data/dataset_source.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::run {

/// The data choices of `options` as the dataset sources read them (data/dataset_source.hpp).
/// Call after cli::validate.
/// @throws ConfigError for an unknown --partition or --mixture-sources (validate rejects them
/// first).
data::DataRequest data_request(const cli::RunOptions& options);

/// Loads (image datasets: --dataset, --data-dir, partitioned by --partition and the sample
/// options) or generates (--dataset linreg: --dimension, --separation, --noise) every client's
/// data. A mixture --partition (mixture_*) mixes --clusters sources per client instead
/// (data/mixture.hpp:
/// --mixture-sources for images, the optimal models for linreg). Deterministic in --data-seed.
/// The registered source of --dataset (data/dataset_registry.hpp) makes the data from
/// data_request().
/// @throws DataError for missing or corrupt data files and impossible partitions, ConfigError for
///         impossible sizes (see data::make_partition, data::linear_regression_data and
///         data::mixture_image_data).
data::ClientData load_client_data(const cli::RunOptions& options);

/// The loss of the run: reconstruction with --unsupervised, regression for a dataset of real-valued
/// targets (linreg), else classification. @throws ConfigError for an unknown --dataset.
model::Objective objective_of(const cli::RunOptions& options);

/// The architecture (options.effective_model()) and shape the models of the run are built with.
model::Architecture architecture_of(const cli::RunOptions& options);
model::NetworkShape network_shape_of(const data::ClientData& data);

}  // namespace cflrun::run
