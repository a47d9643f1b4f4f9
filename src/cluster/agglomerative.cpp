#include <cflrun/cluster/agglomerative.hpp>

#include <limits>
#include <map>

#include <torch/types.h>

#include <cflrun/cluster/distances.hpp>
#include <cflrun/cluster/input_checks.hpp>

namespace cflrun::cluster {
namespace {

struct Pair {
  int a = -1;
  int b = -1;
};

/// The active pair (a < b) with the smallest merge cost; ties go to the lowest (a, b).
Pair cheapest_pair(const std::vector<std::vector<double>>& cost, const std::vector<bool>& active) {
  Pair best;
  double best_cost = std::numeric_limits<double>::infinity();
  const int m = static_cast<int>(cost.size());
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m && active[static_cast<std::size_t>(a)]; ++b) {
      if (active[static_cast<std::size_t>(b)] && cost[a][b] < best_cost) {
        best_cost = cost[a][b];
        best = {a, b};
      }
    }
  }
  return best;
}

}  // namespace

std::vector<int> agglomerative_ward(const torch::Tensor& points, int k) {
  require_point_matrix(points, "agglomerative clustering");
  const int m = static_cast<int>(points.size(0));
  require_cluster_count(k, m, "agglomerative clustering");
  // Ward's merge cost of singletons i, j is |x_i - x_j|^2 / 2; Lance-Williams keeps it exact after
  // merges when applied to these costs.
  const auto initial = (squared_distances(points, points) / 2.0).contiguous();
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    const double* row = initial[i].data_ptr<double>();
    cost[static_cast<std::size_t>(i)].assign(row, row + m);
  }
  std::vector<double> size(static_cast<std::size_t>(m), 1.0);
  std::vector<bool> active(static_cast<std::size_t>(m), true);
  std::vector<int> root(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    root[static_cast<std::size_t>(i)] = i;
  }
  for (int clusters = m; clusters > k; --clusters) {
    const auto [a, b] = cheapest_pair(cost, active);
    const double na = size[a];
    const double nb = size[b];
    for (int c = 0; c < m; ++c) {
      if (active[static_cast<std::size_t>(c)] && c != a && c != b) {
        const double nc = size[static_cast<std::size_t>(c)];
        const double merged =
            ((na + nc) * cost[a][c] + (nb + nc) * cost[b][c] - nc * cost[a][b]) / (na + nb + nc);
        cost[a][c] = cost[c][a] = merged;
      }
    }
    size[a] += nb;
    active[b] = false;
    for (auto& r : root) {
      r = r == b ? a : r;
    }
  }
  std::map<int, int> label_of_root;
  std::vector<int> labels(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    const auto found = label_of_root.emplace(root[static_cast<std::size_t>(i)],
                                             static_cast<int>(label_of_root.size()));
    labels[static_cast<std::size_t>(i)] = found.first->second;
  }
  return labels;
}

}  // namespace cflrun::cluster
