#include <cflrun/cluster/bipartition.hpp>

#include <algorithm>
#include <limits>
#include <numeric>

#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

struct Merge {
  int a = 0;  // representative kept
  int b = 0;  // representative merged into a
  double height = 0.0;
};

void require_distances(const torch::Tensor& distances) {
  if (distances.dim() != 2 || distances.size(0) != distances.size(1) || distances.size(0) < 2 ||
      distances.scalar_type() != torch::kFloat64) {
    throw ShapeError(
        "complete_linkage_bipartition: expected a square [n, n] float64 matrix with n >= 2, but "
        "got " +
        c10::str(distances.sizes(), " ", distances.scalar_type()));
  }
  if (!torch::isfinite(distances).all().item<bool>()) {
    throw DataError("complete_linkage_bipartition: the distances hold a non-finite value");
  }
}

/// The active cluster nearest to `a` (ties: `preferred` if it ties, else the lowest index).
int nearest(const std::vector<std::vector<double>>& d, const std::vector<bool>& active, int a,
            int preferred) {
  int best = -1;
  for (int c = 0; c < static_cast<int>(d.size()); ++c) {
    if (c != a && active[static_cast<std::size_t>(c)] && (best < 0 || d[a][c] < d[a][best])) {
      best = c;
    }
  }
  return preferred >= 0 && d[a][preferred] <= d[a][best] ? preferred : best;
}

/// Every merge of the complete-linkage dendrogram, by the nearest-neighbour chain (valid because
/// complete linkage is reducible: the merges are those of the naive algorithm).
std::vector<Merge> dendrogram(std::vector<std::vector<double>> d) {
  const int n = static_cast<int>(d.size());
  std::vector<bool> active(static_cast<std::size_t>(n), true);
  std::vector<int> chain;
  std::vector<Merge> merges;
  while (static_cast<int>(merges.size()) < n - 1) {
    if (chain.empty()) {
      chain.push_back(
          static_cast<int>(std::find(active.begin(), active.end(), true) - active.begin()));
    }
    const int a = chain.back();
    const int previous = chain.size() >= 2 ? chain[chain.size() - 2] : -1;
    const int b = nearest(d, active, a, previous);
    if (b != previous) {
      chain.push_back(b);
      continue;
    }
    chain.pop_back();
    chain.pop_back();
    const int keep = std::min(a, b);
    const int gone = std::max(a, b);
    merges.push_back({keep, gone, d[a][b]});
    active[static_cast<std::size_t>(gone)] = false;
    for (int c = 0; c < n; ++c) {  // Lance-Williams for complete linkage: the larger distance
      d[keep][c] = d[c][keep] = std::max(d[keep][c], d[gone][c]);
    }
  }
  return merges;
}

int root(std::vector<int>& parent, int i) {
  while (parent[static_cast<std::size_t>(i)] != i) {
    i = parent[static_cast<std::size_t>(i)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
  }
  return i;
}

}  // namespace

std::vector<int> complete_linkage_bipartition(const torch::Tensor& distances) {
  require_distances(distances);
  const auto n = static_cast<std::size_t>(distances.size(0));
  const auto values = distances.contiguous();
  std::vector<std::vector<double>> d(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    std::copy(values.data_ptr<double>() + i * n, values.data_ptr<double>() + (i + 1) * n,
              d[i].begin());
  }
  auto merges = dendrogram(std::move(d));
  std::stable_sort(merges.begin(), merges.end(),
                   [](const Merge& x, const Merge& y) { return x.height < y.height; });
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (std::size_t m = 0; m + 1 < merges.size();
       ++m) {  // all merges but the last: two clusters remain
    parent[static_cast<std::size_t>(root(parent, merges[m].b))] = root(parent, merges[m].a);
  }
  std::vector<int> groups(n);
  const int first = root(parent, 0);
  for (std::size_t i = 0; i < n; ++i) {
    groups[i] = root(parent, static_cast<int>(i)) == first ? 0 : 1;
  }
  return groups;
}

}  // namespace cflrun::cluster
