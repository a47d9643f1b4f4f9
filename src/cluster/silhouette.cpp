#include <cflrun/cluster/silhouette.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include <torch/torch.h>

#include <cflrun/cluster/agglomerative.hpp>
#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

/// Labels renamed to 0..C-1 in order of first appearance, as an [M] int64 tensor; C via `count`.
torch::Tensor dense_labels(const std::vector<int>& labels, std::int64_t& count) {
  std::map<int, std::int64_t> ids;
  std::vector<std::int64_t> dense;
  for (int label : labels) {
    dense.push_back(ids.emplace(label, static_cast<std::int64_t>(ids.size())).first->second);
  }
  count = static_cast<std::int64_t>(ids.size());
  return torch::tensor(dense, torch::kInt64);
}

}  // namespace

double silhouette_score(const torch::Tensor& points, const std::vector<int>& labels) {
  require_point_matrix(points, "silhouette");
  const auto m = points.size(0);
  if (static_cast<std::int64_t>(labels.size()) != m) {
    throw ShapeError("silhouette: " + std::to_string(labels.size()) + " labels for " + std::to_string(m) + " points");
  }
  std::int64_t clusters = 0;
  const auto cluster = dense_labels(labels, clusters);
  if (clusters < 2 || clusters > m - 1) {
    throw ConfigError("silhouette: needs between 2 and " + std::to_string(m - 1) + " clusters, but got " +
                      std::to_string(clusters));
  }
  const auto distances = torch::cdist(points, points);                         // [M, M]
  const auto members = torch::one_hot(cluster, clusters).to(torch::kFloat64);  // [M, C]
  const auto sizes = members.sum(0);                                           // [C]
  const auto sums = distances.matmul(members);                                 // [M, C]
  const auto own = sizes.index_select(0, cluster);                             // [M]
  const auto a = sums.gather(1, cluster.unsqueeze(1)).squeeze(1) / (own - 1).clamp_min(1);
  const auto other_means = (sums / sizes).scatter(1, cluster.unsqueeze(1), std::numeric_limits<double>::infinity());
  const auto b = std::get<0>(other_means.min(1));
  const auto denominator = torch::maximum(a, b);
  auto s = ((b - a) / denominator).nan_to_num(0.0);
  s = s.masked_fill(own.eq(1), 0.0);
  return s.mean().item<double>();
}

SelectedClustering select_best_k(const torch::Tensor& points, int k_max, double growth) {
  require_point_matrix(points, "selectBestK");
  const auto m = points.size(0);
  SelectedClustering best;
  best.labels.assign(static_cast<std::size_t>(m), 0);
  const int last = static_cast<int>(std::min<std::int64_t>(m - 1, k_max));
  if (last < 2 || torch::equal(points, points[0].expand_as(points))) {
    return best;
  }
  for (int k = 2; k <= last; ++k) {
    const auto labels = agglomerative_ward(points, k);
    const double score = silhouette_score(points, labels);
    best.scores_by_k.push_back(score);
    if (k == 2 || score > growth * best.score) {
      best.k = k;
      best.labels = labels;
      best.score = score;
    }
  }
  return best;
}

}  // namespace cflrun::cluster
