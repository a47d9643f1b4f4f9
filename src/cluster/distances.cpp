#include <cflrun/cluster/distances.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>

#include <ATen/Parallel.h>

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
  if (!points.is_cpu() || !centres.is_cpu()) {
    return (points.unsqueeze(/*dim=*/1) - centres.unsqueeze(/*dim=*/0)).square().sum(/*dim=*/2);
  }
  // No [M, k, D] differences (at 10 000 clients and K = 10 these were 8 MB per Lloyd step, most
  // of a round's clustering time). Each entry sums its D squared differences in index order from
  // 0, so every CPU gives the same bits. A block of points is copied transposed, [D, block], and
  // its sums stay in a small buffer, so the innermost loop runs over points and vectorises without
  // reordering any sum.
  const torch::Tensor x = points.contiguous();
  const torch::Tensor c = centres.contiguous();
  const std::int64_t num_points = x.size(0);
  const std::int64_t num_centres = c.size(0);
  const std::int64_t width = x.size(1);
  torch::Tensor distances = torch::empty({num_points, num_centres}, x.options());
  const double* rows = x.data_ptr<double>();
  const double* centre_rows = c.data_ptr<double>();
  double* out = distances.data_ptr<double>();
  constexpr std::int64_t kBlock = 256;
  at::parallel_for(0, num_points, 4 * kBlock, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> block(static_cast<std::size_t>(kBlock * width));
    std::array<double, kBlock> sums{};
    for (std::int64_t first = begin; first < end; first += kBlock) {
      const std::int64_t count = std::min(kBlock, end - first);
      for (std::int64_t p = 0; p < count; ++p) {
        for (std::int64_t d = 0; d < width; ++d) {
          block[d * kBlock + p] = rows[(first + p) * width + d];
        }
      }
      for (std::int64_t j = 0; j < num_centres; ++j) {
        std::fill(sums.begin(), sums.begin() + count, 0.0);
        for (std::int64_t d = 0; d < width; ++d) {
          const double* column = block.data() + d * kBlock;
          const double centre = centre_rows[j * width + d];
          for (std::int64_t p = 0; p < count; ++p) {
            const double difference = column[p] - centre;
            sums[p] += difference * difference;
          }
        }
        for (std::int64_t p = 0; p < count; ++p) {
          out[(first + p) * num_centres + j] = sums[p];
        }
      }
    }
  });
  return distances;
}

NearestCentres nearest_centres_with_distances(const torch::Tensor& points,
                                              const torch::Tensor& centres) {
  require_compatible(points, centres);
  if (centres.size(0) < 1) {
    throw ShapeError("nearest_centres: expected at least one centre, but got none");
  }
  const torch::Tensor distances = squared_distances(points, centres).cpu().contiguous();
  const std::int64_t num_centres = distances.size(1);
  NearestCentres nearest;
  nearest.centre.resize(distances.size(0));
  nearest.squared_distance.resize(distances.size(0));
  const double* row = distances.data_ptr<double>();
  for (std::size_t i = 0; i < nearest.centre.size(); ++i, row += num_centres) {
    const double* smallest = std::min_element(row, row + num_centres);  // first of equal ones
    nearest.centre[i] = smallest - row;
    nearest.squared_distance[i] = *smallest;
  }
  return nearest;
}

std::vector<int> nearest_centres(const torch::Tensor& points, const torch::Tensor& centres) {
  const std::vector<std::int64_t> nearest = nearest_centres_with_distances(points, centres).centre;
  return std::vector<int>(nearest.begin(), nearest.end());
}

}  // namespace cflrun::cluster
