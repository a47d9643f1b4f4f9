#include <cflrun/cluster/kmeans_plus_plus.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <cflrun/cluster/distances.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::cluster {
namespace {

std::vector<double> to_vector(const torch::Tensor& values) {
  const torch::Tensor flat = values.contiguous();
  const double* begin = flat.data_ptr<double>();
  return std::vector<double>(begin, begin + flat.numel());
}

/// A point not chosen yet, uniformly: used when every point coincides with a chosen centre.
std::int64_t draw_unchosen(const std::vector<std::int64_t>& chosen, std::int64_t num_points,
                           std::mt19937_64& engine) {
  std::vector<std::int64_t> unchosen;
  for (std::int64_t i = 0; i < num_points; ++i) {
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) {
      unchosen.push_back(i);
    }
  }
  return unchosen[core::uniform_index(engine, unchosen.size())];
}

/// A point with probability proportional to its weight D(x)^2 (inverse-CDF draw). Points of
/// weight 0, i.e. the chosen centres and their duplicates, are never returned.
std::int64_t draw_proportional(const std::vector<double>& weights, double total,
                               std::mt19937_64& engine) {
  const double target = core::uniform01(engine) * total;
  double cumulative = 0.0;
  std::int64_t last_positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) {
      continue;
    }
    cumulative += weights[i];
    last_positive = static_cast<std::int64_t>(i);
    if (cumulative > target) {
      return last_positive;
    }
  }
  return last_positive;  // rounding left target at or beyond the summed weights
}

}  // namespace

torch::Tensor kmeans_plus_plus_centres(const torch::Tensor& points, int k,
                                       std::mt19937_64& engine) {
  require_point_matrix(points, "k-means++");
  const std::int64_t num_points = points.size(0);
  require_cluster_count(k, num_points, "k-means++");

  std::vector<std::int64_t> chosen{
      static_cast<std::int64_t>(core::uniform_index(engine, num_points))};
  // closest[i] = D(x_i)^2, squared distance to the nearest centre chosen so far.
  torch::Tensor closest = squared_distances(points, points.narrow(0, chosen.back(), 1)).squeeze(1);
  while (static_cast<int>(chosen.size()) < k) {
    const std::vector<double> weights = to_vector(closest);
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    chosen.push_back(total > 0.0 ? draw_proportional(weights, total, engine)
                                 : draw_unchosen(chosen, num_points, engine));
    closest = torch::minimum(
        closest, squared_distances(points, points.narrow(0, chosen.back(), 1)).squeeze(1));
  }
  return points.index_select(0, torch::tensor(chosen, torch::kInt64));
}

}  // namespace cflrun::cluster
