#pragma once
/// @file
/// Input checks shared by the clustering routines (points as rows of a matrix, cluster counts).

#include <cstdint>
#include <string>

#include <torch/types.h>

namespace cflrun::cluster {

/// Checks that `points` is a non-empty [M, D] float64 matrix of finite values (M, D >= 1).
/// @param points  the tensor to check.
/// @param who     prefix of the error message, e.g. "k-means".
/// @throws ShapeError  if `points` is not 2-D, not float64, or has no rows or no columns; the
///                     message gives the shape and dtype found.
/// @throws DataError   if `points` holds a NaN or an infinity (e.g. a diverged model's loss).
void require_point_matrix(const torch::Tensor& points, const std::string& who);

/// Checks that a number of clusters k is between 1 and the number of points M.
/// @param who  prefix of the error message, e.g. "k-means".
/// @throws ConfigError "<who>: k must be between 1 and the number of points (M), but got k".
void require_cluster_count(int k, std::int64_t num_points, const std::string& who);

}  // namespace cflrun::cluster
