#pragma once
/// @file
/// Squared Euclidean distances between points and centres, and nearest-centre assignment.

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Squared Euclidean distances between every point and every centre.
/// Computed from the exact differences (not |x|^2 + |c|^2 - 2 x.c), so coincident points are at
/// distance exactly 0 and equal distances compare equal, which k-means++ and tie-breaking rely on.
/// @param points   [M, D] float64.
/// @param centres  [k, D] float64.
/// @return         [M, k] float64, entry (i, c) = |points[i] - centres[c]|^2.
/// @throws ShapeError if either tensor is not 2-D float64 or their widths D differ.
torch::Tensor squared_distances(const torch::Tensor& points, const torch::Tensor& centres);

/// The nearest centre of every point; a tie goes to the lowest centre index.
/// @param points   [M, D] float64.
/// @param centres  [k, D] float64, k >= 1.
/// @return         [M] centre indices in [0, k).
/// @throws ShapeError as `squared_distances`, or if there is no centre.
std::vector<int> nearest_centres(const torch::Tensor& points, const torch::Tensor& centres);

}  // namespace cflrun::cluster
