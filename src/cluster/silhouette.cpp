#include <cflrun/cluster/silhouette.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include <torch/types.h>

#include <cflrun/cluster/input_checks.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

/// torch::cdist compute_mode "donot_use_mm_for_euclid_dist": distances from the exact
/// differences, so coincident points are at distance exactly 0 (see distances.hpp).
constexpr std::int64_t kExactEuclidean = 2;

/// [n] int64 cluster index of each point, renumbered 0, 1, ... by first appearance.
torch::Tensor dense_labels(const std::vector<int>& labels) {
  std::map<int, std::int64_t> index_of_label;
  std::vector<std::int64_t> dense;
  dense.reserve(labels.size());
  for (const int label : labels) {
    const auto found =
        index_of_label.emplace(label, static_cast<std::int64_t>(index_of_label.size()));
    dense.push_back(found.first->second);
  }
  return torch::tensor(dense, torch::kInt64);
}

void require_labels(std::size_t num_labels, std::int64_t num_clusters, std::int64_t num_points) {
  const std::string who = "silhouette_score: ";
  if (static_cast<std::int64_t>(num_labels) != num_points) {
    throw ShapeError(who + "expected one label per point (" + std::to_string(num_points) +
                     "), but got " + std::to_string(num_labels) + " labels");
  }
  if (num_clusters < 2 || num_clusters > num_points - 1) {
    throw ConfigError(who + "the labels must name between 2 and n - 1 clusters (n = " +
                      std::to_string(num_points) + " points), but name " +
                      std::to_string(num_clusters) +
                      "; the silhouette is undefined for one cluster or one point per cluster");
  }
}

}  // namespace

double silhouette_score(const torch::Tensor& points, const std::vector<int>& labels) {
  require_point_matrix(points, "silhouette_score");
  const torch::Tensor cluster = dense_labels(labels);  // [n]
  const std::int64_t num_clusters = labels.empty() ? 0 : cluster.max().item<std::int64_t>() + 1;
  require_labels(labels.size(), num_clusters, points.size(0));

  const torch::Tensor distances = torch::cdist(points, points, /*p=*/2.0, kExactEuclidean);
  const torch::Tensor members =
      torch::one_hot(cluster, num_clusters).to(torch::kFloat64);  // [n, L]
  const torch::Tensor sums = distances.mm(members);    // [n, L] summed distance to each cluster
  const torch::Tensor sizes = members.sum(/*dim=*/0);  // [L]
  const torch::Tensor own = cluster.unsqueeze(/*dim=*/1);
  const torch::Tensor own_size = sizes.index_select(/*dim=*/0, cluster);  // [n]
  // The distance of a point to itself is 0, so dividing by size - 1 averages over the others.
  const torch::Tensor a =
      sums.gather(/*dim=*/1, own).squeeze(/*dim=*/1) / (own_size - 1).clamp_min(1);
  const torch::Tensor b = (sums / sizes)
                              .scatter(/*dim=*/1, own, std::numeric_limits<double>::infinity())
                              .amin(/*dim=*/1);
  const torch::Tensor scale = torch::maximum(a, b);
  // Singletons and a = b = 0 score 0 (sklearn: nan_to_num); `where` discards their 0/0.
  const torch::Tensor defined = (own_size > 1).logical_and(scale > 0);
  const torch::Tensor s = torch::where(defined, (b - a) / scale, torch::zeros_like(a));
  return s.mean().item<double>();
}

}  // namespace cflrun::cluster
