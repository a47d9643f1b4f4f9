#include <cflrun/algo/simplex_qp.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

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

constexpr double kMultiplierTolerance = 1e-12;  // relative to P's largest diagonal entry
constexpr double kPivotFloor =
    1e-14;  // relative: a smaller Cholesky pivot means P_FF is not definite
constexpr int kIterationsPerVariable =
    10;  // active-set iterations allowed per weight before SLSQP takes over

void check_square(const torch::Tensor& p, const char* who) {
  if (p.dim() != 2 || p.size(0) != p.size(1) || p.size(0) < 1 ||
      p.scalar_type() != torch::kFloat64) {
    throw ShapeError(std::string(who) + ": expected a square [m, m] float64 matrix, but got " +
                     c10::str(p.sizes(), " ", p.scalar_type()));
  }
}

/// The lower Cholesky factor L of P_FF for a set F that grows and shrinks one index at a time, in
/// O(|F|^2) per change (a bordered row to add, a rank-one update of the trailing block to remove;
/// Golub & Van Loan, Matrix Computations, 4th ed., Sec. 6.5.4). LibTorch has no Cholesky update,
/// and refactoring P_FF at every step made the active-set method O(m^4) per program when most
/// weights are positive (32 s for 300 programs at m = 300, issue 24).
class UpdatedCholesky {
 public:
  UpdatedCholesky(const double* p, std::size_t m) : p_(p), m_(m), l_(m * m, 0.0) {}

  const std::vector<std::size_t>& set() const { return set_; }

  /// F += {j}; false (F unchanged) if the new pivot is not clearly positive.
  bool add(std::size_t j) {
    const auto s = set_.size();
    const double* row = p_ + j * m_;
    double* border = &l_[s * m_];  // L's new row: L w = P_Fj
    double squares = 0.0;
    for (std::size_t k = 0; k < s; ++k) {
      double value = row[set_[k]];
      for (std::size_t t = 0; t < k; ++t) {
        value -= l_[k * m_ + t] * border[t];
      }
      border[k] = value / l_[k * m_ + k];
      squares += border[k] * border[k];
    }
    const double pivot = row[j] - squares;
    if (!(pivot > kPivotFloor * std::abs(row[j]))) {
      return false;
    }
    border[s] = std::sqrt(pivot);
    set_.push_back(j);
    return true;
  }

  /// F -= {F[r]}: L loses row and column r, and the trailing block absorbs column r below the
  /// diagonal as a rank-one update (L22' L22'^T = L22 L22^T + x x^T).
  void remove(std::size_t r) {
    const auto s = set_.size();
    std::vector<double> x(s - r - 1);
    for (std::size_t k = r + 1; k < s; ++k) {
      x[k - r - 1] = l_[k * m_ + r];
    }
    for (std::size_t k = r + 1; k < s; ++k) {  // row k moves up to k - 1 without column r
      for (std::size_t t = 0; t < k; ++t) {
        l_[(k - 1) * m_ + t] = l_[k * m_ + t + (t >= r ? 1 : 0)];
      }
    }
    for (std::size_t k = 0; k < x.size(); ++k) {  // the rank-one update of rows and columns r..s-2
      double& diagonal = l_[(r + k) * m_ + r + k];
      const double root = std::hypot(diagonal, x[k]);
      const double c = root / diagonal;
      const double sine = x[k] / diagonal;
      diagonal = root;
      for (std::size_t i = k + 1; i < x.size(); ++i) {
        double& entry = l_[(r + i) * m_ + r + k];
        entry = (entry + sine * x[i]) / c;
        x[i] = c * x[i] - sine * entry;
      }
    }
    set_.erase(set_.begin() + static_cast<std::ptrdiff_t>(r));
  }

  /// P_FF^{-1} 1 by forward and back substitution.
  std::vector<double> solve_ones() const {
    const auto s = set_.size();
    std::vector<double> x(s, 1.0);
    for (std::size_t k = 0; k < s; ++k) {
      for (std::size_t t = 0; t < k; ++t) {
        x[k] -= l_[k * m_ + t] * x[t];
      }
      x[k] /= l_[k * m_ + k];
    }
    for (std::size_t k = s; k-- > 0;) {
      for (std::size_t t = k + 1; t < s; ++t) {
        x[k] -= l_[t * m_ + k] * x[t];
      }
      x[k] /= l_[k * m_ + k];
    }
    return x;
  }

 private:
  const double* p_;
  std::size_t m_;
  std::vector<double> l_;  // [m, m] row-major, the leading |F| x |F| block in use
  std::vector<std::size_t> set_;
};

/// The primal active-set method for min a^T P a on the simplex (Nocedal & Wright Alg. 16.3) with
/// the bounds a_j >= 0 as inequalities and sum_j a_j = 1 always active, from the vertex of P's
/// smallest diagonal entry. The free set F holds the weights not held at 0; on F the
/// equality-constrained minimiser is y = P_FF^{-1} 1 / 1^T P_FF^{-1} 1. About one iteration per
/// positive weight, each O(m |F|).
class ActiveSet {
 public:
  ActiveSet(const double* p, std::size_t m) : p_(p), m_(m), factor_(p, m), weights_(m, 0.0) {
    double largest = 0.0;
    std::size_t start = 0;
    for (std::size_t j = 0; j < m; ++j) {
      largest = std::max(largest, std::abs(diagonal(j)));
      start = diagonal(j) < diagonal(start) ? j : start;
    }
    tolerance_ = kMultiplierTolerance * largest;
    ready_ = factor_.add(start);
    weights_[start] = 1.0;
  }

  /// The minimiser, or nothing where a P_FF is not positive definite or the iterations run out.
  std::optional<std::vector<double>> solve() {
    for (std::size_t iteration = 0; ready_ && iteration < kIterationsPerVariable * m_ + 10;
         ++iteration) {
      const auto target = equality_minimiser();
      if (!target) {
        return std::nullopt;
      }
      if (const auto blocking = step_towards(*target)) {
        weights_[factor_.set()[*blocking]] = 0.0;
        factor_.remove(*blocking);
        continue;
      }
      const auto entering = most_negative_multiplier();
      if (!entering) {
        return weights_;
      }
      if (!factor_.add(*entering)) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

 private:
  double diagonal(std::size_t j) const { return p_[j * m_ + j]; }

  /// y on F, or nothing where 1^T P_FF^{-1} 1 is not positive.
  std::optional<std::vector<double>> equality_minimiser() const {
    auto x = factor_.solve_ones();
    double total = 0.0;
    for (const double value : x) {
      total += value;
    }
    if (!(total > 0.0)) {
      return std::nullopt;
    }
    for (double& value : x) {
      value /= total;
    }
    return x;
  }

  /// Moves the weights on F towards y as far as a_j >= 0 allows; the position in F of the weight
  /// that reached 0 first, if one did.
  std::optional<std::size_t> step_towards(const std::vector<double>& y) {
    const auto& set = factor_.set();
    double length = 1.0;
    std::optional<std::size_t> blocking;
    for (std::size_t r = 0; r < set.size(); ++r) {
      const double a = weights_[set[r]];
      if (y[r] < 0.0 && a / (a - y[r]) < length) {
        length = a / (a - y[r]);
        blocking = r;
      }
    }
    for (std::size_t r = 0; r < set.size(); ++r) {
      weights_[set[r]] += length * (y[r] - weights_[set[r]]);
    }
    return blocking;
  }

  /// At the minimiser on F: the weight held at 0 whose multiplier (2 P a)_j - 2 a^T P a is the
  /// most negative beyond the tolerance, or nothing (the KKT conditions hold).
  std::optional<std::size_t> most_negative_multiplier() const {
    std::vector<double> gradient(m_, 0.0);  // P a = sum over F of a_f P[f, :] (P symmetric)
    for (const auto f : factor_.set()) {
      const double* row = p_ + f * m_;
      for (std::size_t j = 0; j < m_; ++j) {
        gradient[j] += weights_[f] * row[j];
      }
    }
    double value = 0.0;  // a^T P a
    for (const auto f : factor_.set()) {
      value += weights_[f] * gradient[f];
    }
    std::optional<std::size_t> entering;
    double most_negative = -tolerance_ / 2.0;  // multipliers / 2
    for (std::size_t j = 0; j < m_; ++j) {
      if (weights_[j] == 0.0 && gradient[j] - value < most_negative &&
          std::find(factor_.set().begin(), factor_.set().end(), j) == factor_.set().end()) {
        most_negative = gradient[j] - value;
        entering = j;
      }
    }
    return entering;
  }

  const double* p_;
  std::size_t m_;
  UpdatedCholesky factor_;
  std::vector<double> weights_;
  double tolerance_ = 0.0;
  bool ready_ = false;
};

}  // namespace

std::vector<double> minimise_on_simplex(const torch::Tensor& p) {
  check_square(p, "minimise_on_simplex");
  const auto values = p.contiguous();
  if (auto weights =
          ActiveSet(values.data_ptr<double>(), static_cast<std::size_t>(p.size(0))).solve()) {
    return *weights;
  }
  return minimise_on_simplex_slsqp(values);
}

std::vector<double> minimise_on_simplex_slsqp(const torch::Tensor& p) {
  check_square(p, "minimise_on_simplex_slsqp");
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
    throw Error("minimise_on_simplex_slsqp: NLopt's SLSQP failed with code " +
                std::to_string(static_cast<int>(result)));
  }
  return a;
}

}  // namespace cflrun::algo
