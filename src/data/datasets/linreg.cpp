#include <cflrun/data/datasets/linreg.hpp>

#include <cflrun/data/linear_regression.hpp>
#include <cflrun/data/mixture.hpp>

namespace cflrun::data {

bool LinearRegressionSource::accepts_partition(const std::string& partition) const {
  // label_skew_1 is --partition's default: no partition was asked for.
  return partition == partition_name(PartitionKind::kLabelSkew1) || is_mixture_partition(partition);
}

std::string LinearRegressionSource::partition_requirement() const {
  return "a mixture_* partition or none with --dataset " + name() +
         " (its clusters are its optimal models)";
}

std::string LinearRegressionSource::layout(const DataRequest& request) const {
  return "(Delta " + std::to_string(request.regression.separation) + ")";
}

ClientData LinearRegressionSource::client_data(const DataRequest& request) const {
  if (request.mixture) {
    return mixture_linear_regression_data(request.regression, *request.mixture);
  }
  return linear_regression_data(request.regression);
}

}  // namespace cflrun::data
