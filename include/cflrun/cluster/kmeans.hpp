#pragma once
/// @file
/// k-means clustering: Lloyd's algorithm from k-means++ seeds, best of several restarts.
///
/// CLoVE Alg. 1 line 9 clusters the loss vectors with k-means (official code: scikit-learn
/// KMeans, k-means++ init). Convergence test and empty-cluster handling follow scikit-learn's
/// `_kmeans_single_lloyd`; the seeding is the plain k-means++ of the paper (see
/// kmeans_plus_plus.hpp), so results agree with scikit-learn in distribution, not draw for draw.

#include <random>
#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Settings of `kmeans`.
struct KMeansOptions {
  /// Independent k-means++ starts; the run with the lowest inertia is kept. Note: the official
  /// CLoVE code uses scikit-learn's n_init = "auto", which is 1 start for k-means++ init.
  int restarts = 10;
  /// D^2-weighted candidates per k-means++ step, the best kept (kmeans_plus_plus_centres): 1 = the
  /// plain k-means++ of the paper; 0 = scikit-learn's greedy 2 + floor(ln k).
  int seeding_candidates = 1;
  int max_iterations = 300;  ///< Lloyd iterations per start (scikit-learn max_iter).
  /// Relative tolerance (scikit-learn tol): a start stops when the summed squared shift of the
  /// centres is <= tolerance x the mean over dimensions of the data's (population) variance.
  double tolerance = 1e-4;
};

/// Outcome of `kmeans`.
struct KMeansResult {
  std::vector<int> labels;  ///< [M] cluster of each point, in [0, k).
  /// [k, D] float64, the final centres: the means of the clusters of the last Lloyd step (so
  /// after convergence the mean of the points labelled c; an empty cluster keeps its centre).
  torch::Tensor centroids;
  double inertia = 0.0;  ///< sum of squared distances of the points to their centroid.
  int iterations = 0;    ///< Lloyd iterations of the kept start.
};

/// Clusters the rows of `points` into k clusters.
/// Each start seeds with k-means++, then runs Lloyd iterations (assign every point to its
/// nearest centre, ties to the lowest index; move each centre to its points' mean) until the
/// labels do not change, the centre shift falls within the tolerance, or max_iterations is
/// reached; the final labels are those of the final centres. A cluster that becomes empty gets
/// its centre moved to the point farthest from its own centre (scikit-learn's relocation), if
/// such a point is not at distance 0 and is not alone in its cluster. With fewer distinct
/// points than k, some clusters may therefore stay empty (their labels are unused).
/// Deterministic given the engine state; restarts draw from `engine` one after the other, then
/// run their Lloyd iterations side by side on the intra-op threads (the same result, bit for bit,
/// on any number of threads). Cost per Lloyd step O(M k D) with no [M, k, D] temporary
/// (tests/bench/clustering_scale: 10 000 clients, K = 10, 10 restarts in about 0.08 s on one core).
/// @param points   [M, D] float64, finite; one row per point (CLoVE: one loss vector per client).
/// @param k        number of clusters, 1 <= k <= M.
/// @param options  restarts, iteration limit and tolerance.
/// @param engine   random stream (core::Purpose::kClustering); advanced by the seeding draws.
/// @return         labels, centroids, inertia and iterations of the start with the lowest inertia
///                 (the earliest one on ties).
/// @throws ShapeError, DataError  as require_point_matrix (not [M, D] float64, or non-finite).
/// @throws ConfigError            if k is not in [1, M], restarts < 1, seeding_candidates < 0,
///                                max_iterations < 1 or tolerance < 0.
KMeansResult kmeans(const torch::Tensor& points, int k, const KMeansOptions& options,
                    std::mt19937_64& engine);

}  // namespace cflrun::cluster
