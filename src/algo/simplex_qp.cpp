#include <cflrun/algo/simplex_qp.hpp>

#include <memory>

#include <nlopt.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

constexpr double kTolerance = 1e-12;
constexpr double kConstraintTolerance = 1e-12;

struct Quadratic {
  const double* p;
  unsigned m;
};

/// a^T P a and its gradient 2 P a.
double objective(unsigned m, const double* a, double* gradient, void* data) {
  const auto& q = *static_cast<const Quadratic*>(data);
  double value = 0.0;
  for (unsigned i = 0; i < m; ++i) {
    double row = 0.0;
    for (unsigned j = 0; j < m; ++j) {
      row += q.p[i * q.m + j] * a[j];
    }
    value += a[i] * row;
    if (gradient != nullptr) {
      gradient[i] = 2.0 * row;
    }
  }
  return value;
}

/// sum_j a_j - 1 (= 0 on the simplex).
double sum_to_one(unsigned m, const double* a, double* gradient, void* /*data*/) {
  double sum = -1.0;
  for (unsigned j = 0; j < m; ++j) {
    sum += a[j];
    if (gradient != nullptr) {
      gradient[j] = 1.0;
    }
  }
  return sum;
}

using Optimizer = std::unique_ptr<nlopt_opt_s, decltype(&nlopt_destroy)>;

}  // namespace

std::vector<double> minimise_on_simplex(const torch::Tensor& p) {
  if (p.dim() != 2 || p.size(0) != p.size(1) || p.size(0) < 1 || p.scalar_type() != torch::kFloat64) {
    throw ShapeError("minimise_on_simplex: expected a square [m, m] float64 matrix, but got " +
                     c10::str(p.sizes(), " ", p.scalar_type()));
  }
  const auto m = static_cast<unsigned>(p.size(0));
  const auto values = p.contiguous();
  Quadratic quadratic{values.data_ptr<double>(), m};
  Optimizer optimizer(nlopt_create(NLOPT_LD_SLSQP, m), &nlopt_destroy);
  nlopt_set_min_objective(optimizer.get(), objective, &quadratic);
  nlopt_add_equality_constraint(optimizer.get(), sum_to_one, nullptr, kConstraintTolerance);
  nlopt_set_lower_bounds1(optimizer.get(), 0.0);
  nlopt_set_upper_bounds1(optimizer.get(), 1.0);
  nlopt_set_xtol_rel(optimizer.get(), kTolerance);
  nlopt_set_ftol_rel(optimizer.get(), kTolerance);
  std::vector<double> a(m, 1.0 / static_cast<double>(m));
  double minimum = 0.0;
  const auto result = nlopt_optimize(optimizer.get(), a.data(), &minimum);
  if (result < 0 && result != NLOPT_ROUNDOFF_LIMITED) {
    throw Error("minimise_on_simplex: NLopt's SLSQP failed with code " + std::to_string(static_cast<int>(result)));
  }
  return a;
}

}  // namespace cflrun::algo
