#pragma once
/// @file
/// Squared Euclidean distances between points and centres, and nearest-centre assignment.

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Squared Euclidean distances between every point and every centre.
/// Computed from the exact differences (not |x|^2 + |c|^2 - 2 x.c), so coincident points are at
/// distance exactly 0 and equal distances compare equal, which k-means++ and tie-breaking rely on.
/// On the CPU each entry sums its D squared differences in index order (the same bits on every
/// CPU dispatch), O(M k D) time and no [M, k, D] temporary; other devices broadcast.
/// @param points   [M, D] float64.
/// @param centres  [k, D] float64.
/// @return         [M, k] float64, entry (i, c) = |points[i] - centres[c]|^2.
/// @throws ShapeError if either tensor is not 2-D float64 or their widths D differ.
torch::Tensor squared_distances(const torch::Tensor& points, const torch::Tensor& centres);

/// Nearest centres and their distances, see `nearest_centres_with_distances`.
struct NearestCentres {
  std::vector<std::int64_t> centre;      ///< [M] nearest centre of each point, in [0, k).
  std::vector<double> squared_distance;  ///< [M] squared distance to that centre.
};

/// The nearest centre of every point and its squared distance (a Lloyd step's assignment); a tie
/// goes to the lowest centre index.
/// @param points   [M, D] float64.
/// @param centres  [k, D] float64, k >= 1.
/// @return         the centre indices in [0, k) and the squared distances, entries of
///                 `squared_distances(points, centres)`, both on the host.
/// @throws ShapeError as `squared_distances`, or if there is no centre.
NearestCentres nearest_centres_with_distances(const torch::Tensor& points,
                                              const torch::Tensor& centres);

/// The nearest centre of every point; a tie goes to the lowest centre index.
/// @param points   [M, D] float64.
/// @param centres  [k, D] float64, k >= 1.
/// @return         [M] centre indices in [0, k).
/// @throws ShapeError as `squared_distances`, or if there is no centre.
std::vector<int> nearest_centres(const torch::Tensor& points, const torch::Tensor& centres);

}  // namespace cflrun::cluster
