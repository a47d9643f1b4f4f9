#pragma once
/// @file
/// The silhouette score of a clustering (Rousseeuw 1987), CLoVE's criterion for the number of
/// clusters when K is unknown (ICML summary 003, selectBestK; official code: sklearn
/// silhouette_score on the loss vectors).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Mean silhouette coefficient over all points, Euclidean distances, as
/// sklearn.metrics.silhouette_score: for point i in cluster A, a = mean distance to the other
/// points of A, b = smallest mean distance to the points of another cluster,
/// s = (b - a) / max(a, b), and s = 0 for a point alone in its cluster (or with a = b = 0).
/// @param points  [M, D] float64, finite.
/// @param labels  [M] cluster of each point; any integer ids.
/// @return        the mean of s over the M points, in [-1, 1].
/// @throws ShapeError, DataError  as require_point_matrix, or if labels has not M entries.
/// @throws ConfigError            unless 2 <= number of distinct labels <= M - 1 (the score is
///                                undefined otherwise).
double silhouette_score(const torch::Tensor& points, const std::vector<int>& labels);

/// The number of clusters chosen for a set of loss vectors, and the clustering.
struct SelectedClustering {
  int k = 1;                        ///< chosen number of clusters.
  std::vector<int> labels;          ///< [M] cluster of each point, in [0, k).
  double score = 0.0;               ///< silhouette of the chosen clustering (0 when k = 1).
  std::vector<double> scores_by_k;  ///< silhouette of K = 2, 3, ... (index K - 2).
};

/// selectBestK of the ICML version, as the official code runs it (clove-official-setup.md Sec. 11):
/// Ward agglomerative clusterings for K = 2 .. min(M - 1, k_max), scored by silhouette_score; K = 2
/// is the first best, and a larger K replaces the best only if its score exceeds growth x the best
/// score (growth 1.10). With a negative best score this is the official comparison as written.
/// Fewer than 3 points, k_max < 2, or all points identical give K = 1 (every label 0): there is no
/// evidence of more than one cluster.
/// @param points  [M, D] float64, finite (loss vectors, one row per client).
/// @throws ShapeError, DataError as require_point_matrix.
SelectedClustering select_best_k(const torch::Tensor& points, int k_max, double growth = 1.10);

}  // namespace cflrun::cluster
