#include <cflrun/cluster/kmeans.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include <cflrun/cluster/distances.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/cluster/kmeans_plus_plus.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

using Labels = std::vector<std::int64_t>;

void require_options(const KMeansOptions& options) {
  if (options.restarts < 1 || options.seeding_candidates < 0 || options.max_iterations < 1 ||
      !(options.tolerance >= 0.0)) {
    throw ConfigError(
        "k-means: expected restarts >= 1, seeding_candidates >= 0, max_iterations >= 1 and "
        "tolerance >= 0, but got restarts = " +
        std::to_string(options.restarts) +
        ", seeding_candidates = " + std::to_string(options.seeding_candidates) +
        ", max_iterations = " + std::to_string(options.max_iterations) +
        ", tolerance = " + std::to_string(options.tolerance));
  }
}

template <typename T>
std::vector<T> to_vector(const torch::Tensor& values) {
  const torch::Tensor flat = values.contiguous();
  const T* begin = flat.data_ptr<T>();
  return std::vector<T>(begin, begin + flat.numel());
}

/// scikit-learn's empty-cluster relocation (_relocate_empty_clusters_dense): each empty cluster,
/// in increasing order, takes the point farthest from its own centre (ties: lowest index).
/// Unlike scikit-learn, a point at distance 0 or alone in its cluster is skipped, so relocation
/// never empties another cluster or duplicates a centre.
Labels relocate_empty_clusters(Labels membership, const std::vector<double>& distance_to_own,
                               int k) {
  std::vector<std::int64_t> counts(k, 0);
  for (const std::int64_t cluster : membership) {
    ++counts[cluster];
  }
  std::vector<std::size_t> farthest_first(membership.size());
  std::iota(farthest_first.begin(), farthest_first.end(), 0);
  std::stable_sort(farthest_first.begin(), farthest_first.end(), [&](std::size_t a, std::size_t b) {
    return distance_to_own[a] > distance_to_own[b];
  });
  auto candidate = farthest_first.begin();
  for (int cluster = 0; cluster < k; ++cluster) {
    if (counts[cluster] > 0) {
      continue;
    }
    while (candidate != farthest_first.end() &&
           (distance_to_own[*candidate] <= 0.0 || counts[membership[*candidate]] <= 1)) {
      ++candidate;
    }
    if (candidate == farthest_first.end()) {
      break;
    }
    --counts[membership[*candidate]];
    membership[*candidate] = cluster;
    ++counts[cluster];
    ++candidate;
  }
  return membership;
}

/// [k, D] mean of each cluster's points; a cluster without points keeps its old centre.
torch::Tensor cluster_means(const torch::Tensor& points, const Labels& membership,
                            const torch::Tensor& old_centres) {
  const torch::Tensor index = torch::tensor(membership, torch::kInt64);
  const torch::Tensor sums = torch::zeros_like(old_centres).index_add_(0, index, points);
  const torch::Tensor ones = torch::ones({points.size(0)}, points.options());
  const torch::Tensor counts =
      torch::zeros({old_centres.size(0)}, points.options()).index_add_(0, index, ones);
  const torch::Tensor means = sums / counts.clamp_min(1.0).unsqueeze(1);
  return torch::where((counts > 0).unsqueeze(1), means, old_centres);
}

struct LloydOutcome {
  torch::Tensor centres;  ///< [k, D] after the last update.
  int iterations = 0;
};

/// Lloyd iterations from `centres` until the labels repeat or the summed squared centre shift is
/// <= shift_tolerance (scikit-learn's _kmeans_single_lloyd), at most max_iterations.
LloydOutcome lloyd(const torch::Tensor& points, torch::Tensor centres, int max_iterations,
                   double shift_tolerance) {
  const int k = static_cast<int>(centres.size(0));
  Labels previous;
  for (int iteration = 1; iteration <= max_iterations; ++iteration) {
    const torch::Tensor distances = squared_distances(points, centres);
    const torch::Tensor nearest = distances.argmin(/*dim=*/1);  // ties: lowest index
    const torch::Tensor distance_to_own = distances.gather(1, nearest.unsqueeze(1)).squeeze(1);
    Labels labels = to_vector<std::int64_t>(nearest);
    const Labels membership =
        relocate_empty_clusters(labels, to_vector<double>(distance_to_own), k);
    const torch::Tensor next = cluster_means(points, membership, centres);
    const double shift = (next - centres).square().sum().item<double>();
    centres = next;
    if (labels == previous || shift <= shift_tolerance) {
      return {centres, iteration};
    }
    previous = std::move(labels);
  }
  return {centres, max_iterations};
}

/// Labels of the final centres and their inertia.
KMeansResult finish(const torch::Tensor& points, const LloydOutcome& run) {
  const torch::Tensor distances = squared_distances(points, run.centres);
  const torch::Tensor nearest = distances.argmin(/*dim=*/1);
  KMeansResult result;
  result.labels = to_vector<int>(nearest.to(torch::kInt32));
  result.centroids = run.centres;
  result.inertia = distances.gather(1, nearest.unsqueeze(1)).sum().item<double>();
  result.iterations = run.iterations;
  return result;
}

}  // namespace

KMeansResult kmeans(const torch::Tensor& points, int k, const KMeansOptions& options,
                    std::mt19937_64& engine) {
  require_point_matrix(points, "k-means");
  require_cluster_count(k, points.size(0), "k-means");
  require_options(options);
  // scikit-learn's _tolerance: tol x mean over dimensions of the population variance.
  const double mean_variance = (points - points.mean(/*dim=*/0)).square().mean().item<double>();
  const double shift_tolerance = options.tolerance * mean_variance;

  const int candidates = options.seeding_candidates == 0 ? greedy_kmeans_plus_plus_candidates(k)
                                                         : options.seeding_candidates;
  KMeansResult best;
  for (int restart = 0; restart < options.restarts; ++restart) {
    const torch::Tensor seeds = kmeans_plus_plus_centres(points, k, engine, candidates);
    KMeansResult result =
        finish(points, lloyd(points, seeds, options.max_iterations, shift_tolerance));
    if (restart == 0 || result.inertia < best.inertia) {
      best = std::move(result);
    }
  }
  return best;
}

}  // namespace cflrun::cluster
