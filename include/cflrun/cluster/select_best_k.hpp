#pragma once
/// @file
/// Choice of the number of clusters by silhouette search, for CLoVE with an unknown K (paper:
/// the server keeps K-hat models and calls selectBestK each round; official code, rows with
/// K_is_unknown: agglomerative Ward clustering for K = 2 ... min(#clients, upper bound), scored by
/// sklearn.metrics.silhouette_score, a larger K accepted only if its score is > 1.10 x the best).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// The official code's growth factor: a larger K must beat the best score by more than 10%.
inline constexpr double kSilhouetteGrowthFactor = 1.10;

/// Outcome of `select_best_k`.
struct KSelection {
  int k = 1;                ///< chosen number of clusters, 1 <= k <= n - 1 (or k = 1).
  std::vector<int> labels;  ///< [n] Ward cluster of each point for k, in [0, k), numbered by
                            ///< first appearance; all 0 when k = 1.
  double score = 0.0;       ///< silhouette score of `labels`; 0.0 when k = 1 (undefined there).
  /// Silhouette score of the Ward clustering for every K tried: scores_by_k[i] is K = i + 2,
  /// for K = 2 ... min(n - 1, k_max). Empty when k = 1 was decided without a search.
  std::vector<double> scores_by_k;
};

/// Picks the number of clusters of `points` by the official CLoVE rule: for K = 2 ...
/// min(n - 1, k_max), clusters with agglomerative_ward and scores with silhouette_score; the
/// best starts as K = 2 and a larger K replaces it only if score(K) > growth_factor x best score.
/// This is the official comparison verbatim, also when the best score is negative: then
/// growth_factor x best is *below* best, so a K scoring slightly worse can still replace it
/// (e.g. best -0.20, a score of -0.21 > 1.10 x -0.20 = -0.22 wins). K stops at n - 1 because the
/// silhouette is undefined for n clusters of n points (the official search would fail there).
/// Decided without a search, with k = 1 and all labels 0:
/// - n < 3 points: no K in [2, n - 1] exists;
/// - all points identical: every silhouette is 0 (a = b = 0), so the official code would keep
///   K = 2 and split identical clients arbitrarily; one cluster is the meaningful answer.
/// Deterministic (Ward is). O(k_max n^3) time: meant for the clients of a federation.
/// @param points         [n, D] float64, finite; one row per point (CLoVE: loss vectors).
/// @param k_max          largest K to try (inclusive), >= 2; CLoVE: the number of models K-hat.
/// @param growth_factor  factor a larger K's score must exceed the best by; finite, >= 1.
/// @return               chosen k, its labels and score, and the score of every K tried.
/// @throws ShapeError, DataError  as require_point_matrix (not [n, D] float64, or non-finite).
/// @throws ConfigError            if k_max < 2, or growth_factor is not finite or below 1.
KSelection select_best_k(const torch::Tensor& points, int k_max,
                         double growth_factor = kSilhouetteGrowthFactor);

}  // namespace cflrun::cluster
