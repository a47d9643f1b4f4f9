#pragma once
/// @file
/// The small convex quadratic program of FedPAC's classifier collaboration (Xu et al. 2023,
/// Eq. 9; PFLlib's solve_quadratic with cvxpy): minimise a^T P a over the probability simplex.
/// A primal active-set method with the exact Hessian (Nocedal & Wright, Numerical Optimization,
/// 2nd ed., Alg. 16.3) solves it; NLopt's SLSQP (Debian libnlopt-dev) is the fallback where P is
/// not positive definite on the weights the method keeps. SLSQP alone needs about m quasi-Newton
/// iterations of O(m^3) each: about 1 s per program at m = 300 (issue 24).

#include <vector>

#include <torch/types.h>

namespace cflrun::algo {

/// argmin_a a^T P a subject to sum_j a_j = 1 and a_j >= 0: the active-set method, or SLSQP
/// (minimise_on_simplex_slsqp) where a principal submatrix of P it factors is not positive
/// definite.
/// @param p  [m, m] float64, symmetric positive semidefinite, m >= 1.
/// @return   [m] weights on the simplex (exact to rounding where P is positive definite; otherwise
///           to NLopt's tolerance, relative 1e-12 on a).
/// @throws ShapeError if p is not square float64; Error if the fallback NLopt fails.
std::vector<double> minimise_on_simplex(const torch::Tensor& p);

/// The same program solved by NLopt's SLSQP alone from the uniform weights (cflrun's solver before
/// issue 24, kept as the fallback and as the reference of the tests). O(m^3) per iteration.
/// @param p  [m, m] float64, symmetric positive semidefinite, m >= 1.
/// @return   [m] weights on the simplex (to NLopt's tolerance, relative 1e-12 on a).
/// @throws ShapeError if p is not square float64; Error if NLopt fails.
std::vector<double> minimise_on_simplex_slsqp(const torch::Tensor& p);

}  // namespace cflrun::algo
