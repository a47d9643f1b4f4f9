#pragma once
/// @file
/// The small convex quadratic program of FedPAC's classifier collaboration (Xu et al. 2023,
/// Eq. 9; PFLlib's solve_quadratic with cvxpy): minimise a^T P a over the probability simplex,
/// solved with NLopt's SLSQP (Debian libnlopt-dev) rather than a solver of our own.

#include <vector>

#include <torch/types.h>

namespace cflrun::algo {

/// argmin_a a^T P a subject to sum_j a_j = 1 and a_j >= 0.
/// @param p  [m, m] float64, symmetric positive semidefinite, m >= 1.
/// @return   [m] weights on the simplex (to NLopt's tolerance, relative 1e-12 on a).
/// @throws ShapeError if p is not square float64; Error if NLopt fails.
std::vector<double> minimise_on_simplex(const torch::Tensor& p);

}  // namespace cflrun::algo
