#include <cflrun/cluster/select_best_k.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include <torch/types.h>

#include <cflrun/cluster/agglomerative.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/cluster/silhouette.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

void require_search_settings(int k_max, double growth_factor) {
  if (k_max < 2) {
    throw ConfigError(
        "select_best_k: the largest number of clusters to try (k_max) must be at "
        "least 2, but got " +
        std::to_string(k_max) + "; with a single model there is nothing to select");
  }
  if (!std::isfinite(growth_factor) || growth_factor < 1.0) {
    throw ConfigError(
        "select_best_k: the growth factor must be a finite number >= 1 (official "
        "CLoVE: 1.10), but got " +
        std::to_string(growth_factor));
  }
}

bool all_rows_identical(const torch::Tensor& points) {
  return points.eq(points[0]).all().item<bool>();
}

}  // namespace

KSelection select_best_k(const torch::Tensor& points, int k_max, double growth_factor) {
  require_point_matrix(points, "select_best_k");
  require_search_settings(k_max, growth_factor);
  const std::int64_t n = points.size(0);
  if (n < 3 || all_rows_identical(points)) {
    return KSelection{1, std::vector<int>(static_cast<std::size_t>(n), 0), 0.0, {}};
  }
  KSelection best;
  const int k_last = static_cast<int>(std::min<std::int64_t>(n - 1, k_max));
  for (int k = 2; k <= k_last; ++k) {
    std::vector<int> labels = agglomerative_ward(points, k);
    const double score = silhouette_score(points, labels);
    best.scores_by_k.push_back(score);
    // The official rule verbatim, including its behaviour for negative best scores.
    if (k == 2 || score > growth_factor * best.score) {
      best.k = k;
      best.labels = std::move(labels);
      best.score = score;
    }
  }
  return best;
}

}  // namespace cflrun::cluster
