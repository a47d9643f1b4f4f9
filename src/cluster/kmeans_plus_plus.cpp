#include <cflrun/cluster/kmeans_plus_plus.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <numeric>
#include <vector>

#include <cflrun/cluster/distances.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/core/error.hpp>
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

/// [M] squared distance of every point to point `index`.
torch::Tensor distances_to(const torch::Tensor& points, std::int64_t index) {
  return squared_distances(points, points.narrow(0, index, 1)).squeeze(1);
}

/// The greedy step: of `candidates` D^2-weighted draws, the one leaving the smallest potential.
std::int64_t best_of_candidates(const torch::Tensor& points, const torch::Tensor& closest,
                                const std::vector<double>& weights, double total, int candidates,
                                std::mt19937_64& engine) {
  std::int64_t best = draw_proportional(weights, total, engine);
  double best_potential = torch::minimum(closest, distances_to(points, best)).sum().item<double>();
  for (int c = 1; c < candidates; ++c) {
    const std::int64_t candidate = draw_proportional(weights, total, engine);
    const double potential =
        torch::minimum(closest, distances_to(points, candidate)).sum().item<double>();
    if (potential < best_potential) {
      best = candidate;
      best_potential = potential;
    }
  }
  return best;
}

}  // namespace

int greedy_kmeans_plus_plus_candidates(int k) {
  return 2 + static_cast<int>(std::floor(std::log(static_cast<double>(std::max(k, 1)))));
}

torch::Tensor kmeans_plus_plus_centres(const torch::Tensor& points, int k, std::mt19937_64& engine,
                                       int candidates) {
  require_point_matrix(points, "k-means++");
  const std::int64_t num_points = points.size(0);
  require_cluster_count(k, num_points, "k-means++");
  if (candidates < 1) {
    throw ConfigError("k-means++: candidates per step must be at least 1, but got " +
                      std::to_string(candidates));
  }

  std::vector<std::int64_t> chosen{
      static_cast<std::int64_t>(core::uniform_index(engine, num_points))};
  // closest[i] = D(x_i)^2, squared distance to the nearest centre chosen so far.
  torch::Tensor closest = distances_to(points, chosen.back());
  while (static_cast<int>(chosen.size()) < k) {
    const std::vector<double> weights = to_vector(closest);
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    chosen.push_back(total > 0.0
                         ? best_of_candidates(points, closest, weights, total, candidates, engine)
                         : draw_unchosen(chosen, num_points, engine));
    closest = torch::minimum(closest, distances_to(points, chosen.back()));
  }
  return points.index_select(0, torch::tensor(chosen, torch::kInt64));
}

}  // namespace cflrun::cluster
