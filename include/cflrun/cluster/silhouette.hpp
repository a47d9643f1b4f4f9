#pragma once
/// @file
/// Mean silhouette coefficient of a clustering (Rousseeuw, "Silhouettes: a graphical aid to the
/// interpretation and validation of cluster analysis", J. Comput. Appl. Math. 20, 1987), the score
/// by which CLoVE's server picks the number of clusters when K is unknown (paper: selectBestK;
/// official code: sklearn.metrics.silhouette_score, see select_best_k.hpp).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Mean over all points of s(i) = (b(i) - a(i)) / max(a(i), b(i)), with Euclidean distances,
/// where a(i) is the mean distance from point i to the other points of its own cluster and b(i)
/// the smallest mean distance from i to the points of another cluster. Follows
/// sklearn.metrics.silhouette_score (metric "euclidean", no sampling):
/// - a point alone in its cluster has s(i) = 0 (Rousseeuw's convention);
/// - a point with a(i) = b(i) = 0 (it coincides with every point of its own cluster and of the
///   nearest other cluster) has s(i) = 0, as sklearn's nan_to_num gives;
/// - a cluster of identical points that are apart from the rest scores s(i) = 1.
/// Distances come from torch::cdist computed from the exact differences (no |x|^2 + |y|^2 - 2x.y
/// shortcut), so coincident points are at distance exactly 0. O(n^2 (D + L)) time and O(n^2)
/// memory for n points and L clusters.
/// Labels are arbitrary ints (need not be contiguous or start at 0); only equality matters.
/// @param points  [n, D] float64, finite; one row per point (CLoVE: one loss vector per client).
/// @param labels  [n] cluster of each point.
/// @return        the mean silhouette coefficient, in [-1, 1]; higher means compact, separated
///                clusters.
/// @throws ShapeError, DataError  as require_point_matrix (not [n, D] float64, or non-finite).
/// @throws ShapeError             if labels.size() != n.
/// @throws ConfigError            unless 2 <= number of distinct labels <= n - 1 (the score is
///                                undefined otherwise; sklearn raises ValueError). ConfigError,
///                                like require_cluster_count, because a cluster count is out of
///                                range, not a tensor shape.
double silhouette_score(const torch::Tensor& points, const std::vector<int>& labels);

}  // namespace cflrun::cluster
