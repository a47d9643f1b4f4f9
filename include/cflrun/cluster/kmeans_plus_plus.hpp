#pragma once
/// @file
/// k-means++ seeding (Arthur & Vassilvitskii, "k-means++: The Advantages of Careful Seeding",
/// SODA 2007, Sec. 2.2).

#include <random>

#include <torch/types.h>

namespace cflrun::cluster {

/// Picks k initial centres among the points: the first uniformly at random, each next one with
/// probability proportional to D(x)^2, the squared distance from x to its nearest chosen centre.
/// When every remaining point coincides with a chosen centre (total D^2 = 0, fewer distinct
/// points than k), the next centre is drawn uniformly among the points not chosen yet, so k
/// centres are always returned (some then coincide).
/// With candidates = 1 this is the plain algorithm of the paper. With c > 1 it is the greedy
/// variant scikit-learn runs (`_kmeans_plusplus`, Arthur & Vassilvitskii Sec. 6): each step draws
/// c candidates independently with probability proportional to D(x)^2 and keeps the one that
/// leaves the smallest potential sum_x min(D(x)^2, |x - candidate|^2) (the first on ties).
/// scikit-learn uses c = 2 + floor(ln k) (greedy_kmeans_plus_plus_candidates).
/// Draws come from `engine` through core::uniform01 / core::uniform_index, so they are portable
/// and the result is fixed by the engine state (not scikit-learn's draws: same distribution).
/// @param points      [M, D] float64, finite.
/// @param k           number of centres, 1 <= k <= M.
/// @param engine      random stream (core::Purpose::kClustering); advanced by the draws.
/// @param candidates  points drawn per step after the first, >= 1.
/// @return            [k, D] float64, copies of the chosen points in the order drawn.
/// @throws ShapeError, DataError  as require_point_matrix (input_checks.hpp).
/// @throws ConfigError            if k is not in [1, M] or candidates < 1.
torch::Tensor kmeans_plus_plus_centres(const torch::Tensor& points, int k, std::mt19937_64& engine,
                                       int candidates = 1);

/// scikit-learn's candidates per greedy k-means++ step: 2 + floor(ln k) (k >= 1).
int greedy_kmeans_plus_plus_candidates(int k);

}  // namespace cflrun::cluster
