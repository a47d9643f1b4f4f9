#include <cflrun/cluster/hungarian.hpp>

#include <cstddef>
#include <limits>
#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void require_cost_matrix(const torch::Tensor& cost) {
  if (!cost.defined() || cost.dim() != 2 || cost.scalar_type() != torch::kFloat64 ||
      cost.size(0) > cost.size(1)) {
    std::ostringstream text;
    text << "min_cost_matching: expected an [n, m] float64 cost matrix with n <= m (every row "
            "needs its own column), but got ";
    if (cost.defined()) {
      text << cost.sizes() << ' ' << c10::toString(cost.scalar_type());
    } else {
      text << "an undefined tensor";
    }
    throw ShapeError(text.str());
  }
  if (!torch::isfinite(cost).all().item<bool>()) {
    throw DataError(
        "min_cost_matching: the cost matrix holds NaN or infinite values; every "
        "row-column pair needs a finite cost");
  }
}

/// Hungarian algorithm with potentials, 1-based internally: column 0 is a virtual column whose
/// "row" is the row being inserted. Invariant: cost(r, c) - row_potential_[r] -
/// column_potential_[c] >= 0, with equality on matched pairs.
class Hungarian {
 public:
  explicit Hungarian(const torch::Tensor& cost)
      : rows_(static_cast<std::size_t>(cost.size(0))),
        columns_(static_cast<std::size_t>(cost.size(1))),
        cost_(cost.contiguous()),
        row_potential_(rows_ + 1, 0.0),
        column_potential_(columns_ + 1, 0.0),
        row_of_column_(columns_ + 1, 0),
        previous_column_(columns_ + 1, 0) {}

  std::vector<int> solve() {
    for (std::size_t row = 1; row <= rows_; ++row) {
      insert_row(row);
    }
    std::vector<int> column_of_row(rows_, -1);
    for (std::size_t column = 1; column <= columns_; ++column) {
      if (row_of_column_[column] != 0) {
        column_of_row[row_of_column_[column] - 1] = static_cast<int>(column - 1);
      }
    }
    return column_of_row;
  }

 private:
  double reduced_cost(std::size_t row, std::size_t column) const {
    const double* data = cost_.data_ptr<double>();
    return data[(row - 1) * columns_ + (column - 1)] - row_potential_[row] -
           column_potential_[column];
  }

  /// Grows a shortest-path tree from `row` (Dijkstra on reduced costs) until it reaches a free
  /// column, updating the potentials, then flips the augmenting path.
  void insert_row(std::size_t row) {
    row_of_column_[0] = row;
    std::vector<double> slack(columns_ + 1, kInfinity);
    std::vector<bool> in_tree(columns_ + 1, false);
    std::size_t column = 0;
    do {
      in_tree[column] = true;
      const std::size_t tree_row = row_of_column_[column];
      double delta = kInfinity;
      std::size_t next_column = 0;
      for (std::size_t j = 1; j <= columns_; ++j) {
        if (in_tree[j]) {
          continue;
        }
        const double candidate = reduced_cost(tree_row, j);
        if (candidate < slack[j]) {
          slack[j] = candidate;
          previous_column_[j] = column;
        }
        if (slack[j] < delta) {
          delta = slack[j];
          next_column = j;
        }
      }
      for (std::size_t j = 0; j <= columns_; ++j) {
        if (in_tree[j]) {
          row_potential_[row_of_column_[j]] += delta;
          column_potential_[j] -= delta;
        } else {
          slack[j] -= delta;
        }
      }
      column = next_column;
    } while (row_of_column_[column] != 0);
    do {  // flip the path back to the virtual column
      const std::size_t previous = previous_column_[column];
      row_of_column_[column] = row_of_column_[previous];
      column = previous;
    } while (column != 0);
  }

  std::size_t rows_;
  std::size_t columns_;
  torch::Tensor cost_;
  std::vector<double> row_potential_;
  std::vector<double> column_potential_;
  std::vector<std::size_t> row_of_column_;    ///< matched row of each column (0: free).
  std::vector<std::size_t> previous_column_;  ///< predecessor on the shortest-path tree.
};

}  // namespace

std::vector<int> min_cost_matching(const torch::Tensor& cost) {
  require_cost_matrix(cost);
  return Hungarian(cost).solve();
}

}  // namespace cflrun::cluster
