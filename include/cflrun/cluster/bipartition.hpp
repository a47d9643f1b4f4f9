#pragma once
/// @file
/// CFL's bipartition of a cluster (Sattler et al. 2021, Alg. 1 and its official code,
/// cfl-flexcfl-fesem-setup.md Sec. 1): complete-linkage agglomerative clustering into two groups on
/// a precomputed distance matrix (scikit-learn AgglomerativeClustering(2, affinity="precomputed",
/// linkage="complete") on -S, S the cosine similarities of the clients' updates).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Splits n items into two groups: starting from singletons, the two clusters whose largest
/// pairwise distance is smallest merge until two remain (complete linkage). Computed with the
/// nearest-neighbour chain in O(n^2) time; ties merge the pair with the lower indices.
/// @param distances  [n, n] float64, symmetric, finite; the diagonal is ignored. n >= 2.
/// @return           [n] 0 or 1, the group of each item; item 0 is in group 0.
/// @throws ShapeError if distances is not a square float64 matrix with n >= 2; DataError if it
///         holds a non-finite value.
std::vector<int> complete_linkage_bipartition(const torch::Tensor& distances);

}  // namespace cflrun::cluster
