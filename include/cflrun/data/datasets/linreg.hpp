#pragma once
/// @file
/// Synthetic mixed linear regression (`--dataset linreg`; CLoVE Sec. 4 and App. C.1.1, IFCA
/// Sec. 6.1): generated from --data-seed, no files (data/linear_regression.hpp).

#include <filesystem>
#include <string>

#include <cflrun/data/dataset_source.hpp>

namespace cflrun::data {

/// Mixed linear regression: cluster k's clients draw x ~ N(0, I_d), y = <theta*_k, x> + sigma eps.
class LinearRegressionSource : public DatasetSource {
 public:
  std::string name() const override { return "linreg"; }
  std::string summary() const override { return "synthetic mixed linear regression"; }
  /// Empty: generated, no files.
  std::filesystem::path default_data_dir() const override { return {}; }
  TargetKind targets() const override { return TargetKind::kRealValues; }
  int num_classes() const override { return 0; }
  /// "linear", with or without --unsupervised (which it does not support).
  std::string default_model(bool /*unsupervised*/) const override { return "linear"; }
  /// False: its samples have labels only (unsupervised runs need images).
  bool supports_unsupervised() const override { return false; }
  /// label_skew_1 (the default, meaning no partition) or a mixture_* partition: its clusters are
  /// its optimal models.
  bool accepts_partition(const std::string& partition) const override;
  std::string partition_requirement() const override;
  /// "(Delta <--separation>)".
  std::string layout(const DataRequest& request) const override;
  /// data::linear_regression_data(request.regression), or with request.mixture
  /// data::mixture_linear_regression_data.
  /// @throws as those functions (ConfigError for sizes below 1, DataError for unreachable
  /// separations).
  ClientData client_data(const DataRequest& request) const override;
};

}  // namespace cflrun::data
