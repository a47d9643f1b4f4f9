#include <cflrun/cluster/input_checks.hpp>

#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

std::string describe(const torch::Tensor& tensor) {
  std::ostringstream text;
  text << tensor.sizes() << ' ' << c10::toString(tensor.scalar_type());
  return text.str();
}

}  // namespace

void require_point_matrix(const torch::Tensor& points, const std::string& who) {
  if (!points.defined() || points.dim() != 2 || points.scalar_type() != torch::kFloat64 ||
      points.size(0) < 1 || points.size(1) < 1) {
    const std::string found = points.defined() ? describe(points) : "an undefined tensor";
    throw ShapeError(who +
                     ": expected the points as a non-empty [M, D] float64 matrix (one row "
                     "per point), but got " +
                     found + "; reshape it or convert it with .to(torch::kFloat64)");
  }
  if (!torch::isfinite(points).all().item<bool>()) {
    throw DataError(who + ": the " + describe(points) +
                    " points hold NaN or infinite values; "
                    "check the losses or features that produced them");
  }
}

void require_cluster_count(int k, std::int64_t num_points, const std::string& who) {
  if (k < 1 || k > num_points) {
    throw ConfigError(who + ": k must be between 1 and the number of points (" +
                      std::to_string(num_points) + "), but got " + std::to_string(k));
  }
}

}  // namespace cflrun::cluster
