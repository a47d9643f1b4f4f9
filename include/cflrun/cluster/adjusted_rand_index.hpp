#pragma once
/// @file
/// Adjusted Rand index between two labelings (Hubert & Arabie, "Comparing partitions",
/// J. Classification 2, 1985), the clustering score of the CLoVE tables (paper Sec. 5; official
/// code: sklearn.metrics.adjusted_rand_score between ground-truth clusters and assignments).

#include <vector>

namespace cflrun::cluster {

/// ARI of `predicted` against `truth`, as sklearn.metrics.adjusted_rand_score computes it.
/// From the contingency table n_ij with row sums a_i, column sums b_j and n points:
/// index = sum C(n_ij, 2), expected = sum C(a_i, 2) sum C(b_j, 2) / C(n, 2),
/// max = (sum C(a_i, 2) + sum C(b_j, 2)) / 2, ARI = (index - expected) / (max - expected).
/// When the labelings are the same partition up to renaming, in particular when both put all
/// points in one cluster or every point in its own cluster (where the formula is 0/0), the
/// result is 1.0, as in scikit-learn. 1 means identical partitions, about 0 chance agreement,
/// negative worse than chance (the minimum is -0.5).
/// Labels are arbitrary ints (need not be contiguous or start at 0); only equality matters.
/// Exact integer pair counts; agrees with scikit-learn to rounding for n below ~90,000 points.
/// @param truth      [n] ground-truth cluster of each point.
/// @param predicted  [n] predicted cluster of each point.
/// @return           the ARI, in [-0.5, 1].
/// @throws ShapeError if the two vectors differ in length or are empty.
double adjusted_rand_index(const std::vector<int>& truth, const std::vector<int>& predicted);

}  // namespace cflrun::cluster
