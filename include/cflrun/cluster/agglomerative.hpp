#pragma once
/// @file
/// Agglomerative (hierarchical) clustering with Ward linkage, the alternative to k-means in the
/// CLoVE paper's ablation (Table 12, row 1902: scikit-learn AgglomerativeClustering, ward,
/// euclidean).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Bottom-up Ward clustering: starts from singletons and repeatedly merges the two clusters whose
/// merge least increases the total within-cluster sum of squares (Ward 1963), using the
/// Lance-Williams update on squared Euclidean distances, until `k` clusters remain. Deterministic:
/// ties merge the pair with the lowest indices. O(M^3) time, O(M^2) memory: meant for the
/// M <= a few thousand loss vectors of a federation.
/// @param points  [M, D] float64, finite.
/// @param k       number of clusters, 1 <= k <= M.
/// @return        [M] cluster of each point in [0, k), numbered by first appearance.
/// @throws ShapeError if points is not a non-empty 2-D float64 matrix; DataError for non-finite
///         values; ConfigError if k is out of range.
std::vector<int> agglomerative_ward(const torch::Tensor& points, int k);

}  // namespace cflrun::cluster
