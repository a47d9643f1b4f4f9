#include <cflrun/cluster/kmeans.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include <ATen/Parallel.h>

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
  if (std::find(counts.begin(), counts.end(), 0) == counts.end()) {
    return membership;  // no empty cluster: nothing to relocate (and no sort to pay for)
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

/// [k, D] mean of each cluster's points; a cluster without points keeps its old centre. Each
/// cluster sums its points in index order (as index_add_ does, in one pass and with no threads).
torch::Tensor cluster_means(const torch::Tensor& points, const Labels& membership,
                            const torch::Tensor& old_centres) {
  const std::int64_t width = points.size(1);
  std::vector<double> sums(static_cast<std::size_t>(old_centres.size(0) * width), 0.0);
  std::vector<std::int64_t> counts(old_centres.size(0), 0);
  const double* row = points.data_ptr<double>();
  for (const std::int64_t cluster : membership) {
    ++counts[cluster];
    double* sum = sums.data() + cluster * width;
    for (std::int64_t d = 0; d < width; ++d, ++row) {
      sum[d] += *row;
    }
  }
  torch::Tensor centres = old_centres.clone(at::MemoryFormat::Contiguous);
  double* centre = centres.data_ptr<double>();
  for (std::size_t cluster = 0; cluster < counts.size(); ++cluster, centre += width) {
    for (std::int64_t d = 0; counts[cluster] > 0 && d < width; ++d) {
      centre[d] = sums[cluster * width + d] / static_cast<double>(counts[cluster]);
    }
  }
  return centres;
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
    NearestCentres nearest = nearest_centres_with_distances(points, centres);
    Labels labels = std::move(nearest.centre);
    const Labels membership = relocate_empty_clusters(labels, nearest.squared_distance, k);
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
  NearestCentres nearest = nearest_centres_with_distances(points, run.centres);
  KMeansResult result;
  result.labels.assign(nearest.centre.begin(), nearest.centre.end());
  result.centroids = run.centres;
  result.inertia = torch::from_blob(nearest.squared_distance.data(),
                                    {static_cast<std::int64_t>(nearest.squared_distance.size())},
                                    torch::kFloat64)
                       .sum()
                       .item<double>();
  result.iterations = run.iterations;
  return result;
}

}  // namespace

KMeansResult kmeans(const torch::Tensor& input, int k, const KMeansOptions& options,
                    std::mt19937_64& engine) {
  require_point_matrix(input, "k-means");
  const torch::Tensor points = input.contiguous();
  require_cluster_count(k, points.size(0), "k-means");
  require_options(options);
  // scikit-learn's _tolerance: tol x mean over dimensions of the population variance.
  const double mean_variance = (points - points.mean(/*dim=*/0)).square().mean().item<double>();
  const double shift_tolerance = options.tolerance * mean_variance;

  const int candidates = options.seeding_candidates == 0 ? greedy_kmeans_plus_plus_candidates(k)
                                                         : options.seeding_candidates;
  // The seeding draws come first, start after start, as the engine would give them to starts run
  // one after another (Lloyd draws nothing); the starts' Lloyd iterations then run side by side
  // on the intra-op threads. The same result on any number of threads.
  std::vector<torch::Tensor> seeds;
  for (int restart = 0; restart < options.restarts; ++restart) {
    seeds.push_back(kmeans_plus_plus_centres(points, k, engine, candidates));
  }
  std::vector<KMeansResult> results(seeds.size());
  at::parallel_for(0, options.restarts, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t restart = begin; restart < end; ++restart) {
      results[restart] =
          finish(points, lloyd(points, seeds[restart], options.max_iterations, shift_tolerance));
    }
  });
  KMeansResult best = std::move(results.front());
  for (std::size_t restart = 1; restart < results.size(); ++restart) {
    if (results[restart].inertia < best.inertia) {  // ties: the earliest start
      best = std::move(results[restart]);
    }
  }
  return best;
}

}  // namespace cflrun::cluster
