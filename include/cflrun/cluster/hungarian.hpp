#pragma once
/// @file
/// Minimum-cost bipartite matching (Kuhn-Munkres / Hungarian algorithm with potentials).
///
/// CLoVE Alg. 1 line 10: min-cost bipartite matching of client clusters to models;
/// cost[c, j] = sum of cluster c's clients' losses on model j. The official code uses
/// scipy.optimize.linear_sum_assignment.

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// Gives every row a distinct column so that the summed cost of the chosen entries is minimal.
/// Kuhn 1955 / Munkres 1957 in its shortest-augmenting-path form with row and column potentials:
/// rows are added one at a time, O(n^2 m) operations. When several matchings share the
/// minimal cost, the one returned is fixed by the algorithm (deterministic) but may differ from
/// scipy's choice.
/// @param cost  [n, m] float64 with n <= m, finite values; cost[r, c] = cost of matching row r to
///              column c. n = 0 is allowed and gives an empty matching.
/// @return      [n] column of each row, distinct values in [0, m).
/// @throws ShapeError  if `cost` is not 2-D float64, or has more rows than columns.
/// @throws DataError   if `cost` holds a NaN or an infinity.
std::vector<int> min_cost_matching(const torch::Tensor& cost);

}  // namespace cflrun::cluster
