#include <cflrun/cluster/distances.hpp>

#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

void require_compatible(const torch::Tensor& points, const torch::Tensor& centres) {
  const auto is_matrix = [](const torch::Tensor& t) {
    return t.defined() && t.dim() == 2 && t.scalar_type() == torch::kFloat64;
  };
  if (!is_matrix(points) || !is_matrix(centres) || points.size(1) != centres.size(1)) {
    std::ostringstream text;
    text << "squared_distances: expected points [M, D] and centres [k, D], both float64, but got ";
    text << (points.defined() ? points.sizes() : torch::IntArrayRef{}) << " and "
         << (centres.defined() ? centres.sizes() : torch::IntArrayRef{});
    throw ShapeError(text.str());
  }
}

}  // namespace

torch::Tensor squared_distances(const torch::Tensor& points, const torch::Tensor& centres) {
  require_compatible(points, centres);
  return (points.unsqueeze(/*dim=*/1) - centres.unsqueeze(/*dim=*/0)).square().sum(/*dim=*/2);
}

std::vector<int> nearest_centres(const torch::Tensor& points, const torch::Tensor& centres) {
  require_compatible(points, centres);
  if (centres.size(0) < 1) {
    throw ShapeError("nearest_centres: expected at least one centre, but got none");
  }
  // torch::argmin returns the first minimal index, i.e. ties go to the lowest centre index.
  const torch::Tensor nearest =
      squared_distances(points, centres).argmin(/*dim=*/1).to(torch::kInt32).contiguous();
  const int* begin = nearest.data_ptr<int>();
  return std::vector<int>(begin, begin + nearest.numel());
}

}  // namespace cflrun::cluster
