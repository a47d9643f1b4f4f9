#include <cflrun/cluster/principal_angles.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <torch/types.h>

#include <cflrun/cluster/clove_assignment.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

constexpr double kDegreesPerRadian = 180.0 / M_PI;

/// Principal angles (degrees) between the column spaces of a [d, p] and b [d, p].
torch::Tensor principal_angles(const torch::Tensor& a, const torch::Tensor& b) {
  const auto cosines = torch::linalg_svdvals(a.transpose(0, 1).matmul(b)).clamp(0.0, 1.0);
  return torch::arccos(cosines) * kDegreesPerRadian;  // ascending angles for descending cosines
}

/// The smallest angle (degrees) between a column of a [d, p] and a column of b [d, q].
double smallest_entrywise_angle(const torch::Tensor& a, const torch::Tensor& b) {
  const auto cosines = a.transpose(0, 1).matmul(b).clamp(-1.0, 1.0);
  return (torch::arccos(cosines) * kDegreesPerRadian).min().item<double>();
}

torch::Tensor left_singular_vectors(const torch::Tensor& data) {
  return std::get<0>(torch::linalg_svd(data, /*full_matrices=*/false));
}

}  // namespace

torch::Tensor per_label_data_signature(const torch::Tensor& inputs, const torch::Tensor& labels,
                                       int p, int num_classes) {
  if (p < 1) {
    throw ConfigError("--pacfl-vectors must be at least 1, but got " + std::to_string(p));
  }
  if (labels.dim() != 1 || labels.scalar_type() != torch::kInt64 ||
      labels.size(0) != inputs.size(0) ||
      (labels.numel() > 0 && (labels.min().item<std::int64_t>() < 0 ||
                              labels.max().item<std::int64_t>() >= num_classes))) {
    throw ShapeError("per_label_data_signature: expected [" + std::to_string(inputs.size(0)) +
                     "] int64 labels in [0, " + std::to_string(num_classes) + "), but got " +
                     c10::str(labels.sizes()));
  }
  const auto data = inputs.reshape({inputs.size(0), -1}).to(torch::kFloat64);  // [n, d]
  auto signature =
      torch::zeros({data.size(1), static_cast<std::int64_t>(p) * num_classes}, torch::kFloat64);
  for (int c = 0; c < num_classes; ++c) {
    const auto rows = torch::nonzero(labels.eq(c)).flatten();
    if (rows.numel() == 0) {
      continue;
    }
    const auto vectors = left_singular_vectors(data.index_select(0, rows).transpose(0, 1));
    const auto kept = std::min<std::int64_t>(p, vectors.size(1));
    signature.narrow(1, static_cast<std::int64_t>(c) * p, kept).copy_(vectors.narrow(1, 0, kept));
  }
  return signature;
}

torch::Tensor data_signature(const torch::Tensor& inputs, int p) {
  const auto data =
      inputs.reshape({inputs.size(0), -1}).to(torch::kFloat64).transpose(0, 1);  // [d, n]
  const auto rank_bound = std::min(data.size(0), data.size(1));
  if (p < 1 || p > rank_bound) {
    throw ConfigError("--pacfl-vectors must be between 1 and " + std::to_string(rank_bound) +
                      " (the smaller of a client's samples and features), but got " +
                      std::to_string(p));
  }
  return left_singular_vectors(data).narrow(1, 0, p).contiguous();
}

torch::Tensor proximity_matrix(const torch::Tensor& signatures, Proximity proximity) {
  if (signatures.dim() != 3 || signatures.scalar_type() != torch::kFloat64 ||
      signatures.size(0) < 1) {
    throw ShapeError("proximity_matrix: expected [M, d, p] float64 signatures, but got " +
                     c10::str(signatures.sizes()));
  }
  const auto m = signatures.size(0);
  auto result = torch::zeros({m, m}, torch::kFloat64);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = i + 1; j < m; ++j) {
      double value = 0.0;
      if (proximity == Proximity::kSmallestEntrywiseAngle) {
        value = smallest_entrywise_angle(signatures[i], signatures[j]);
      } else {
        const auto angles = principal_angles(signatures[i], signatures[j]);
        value = proximity == Proximity::kSmallestAngle ? angles.min().item<double>()
                                                       : angles.sum().item<double>();
      }
      result[i][j] = value;
      result[j][i] = value;
    }
  }
  return result;
}

std::vector<int> hierarchical_clustering(const torch::Tensor& proximity, double beta,
                                         int clusters) {
  if (proximity.dim() != 2 || proximity.size(0) != proximity.size(1) ||
      proximity.scalar_type() != torch::kFloat64) {
    throw ShapeError(
        "hierarchical_clustering: expected a square float64 proximity matrix, but got " +
        c10::str(proximity.sizes()));
  }
  const auto m = static_cast<int>(proximity.size(0));
  if (clusters < 0 || clusters > m) {
    throw ConfigError("--pacfl-clusters must be between 1 and the " + std::to_string(m) +
                      " clients (or 0 to use --pacfl-beta), but got " + std::to_string(clusters));
  }
  auto distance = proximity.clone();
  distance.fill_diagonal_(std::numeric_limits<double>::infinity());
  std::vector<int> label(static_cast<std::size_t>(m));
  std::iota(label.begin(), label.end(), 0);  // label[c] = current cluster (a row index) of client c
  for (int active = m; active > std::max(clusters, 1); --active) {
    const auto flat = distance.argmin().item<std::int64_t>();
    const auto a = flat / m;
    const auto b = flat % m;
    if (clusters == 0 && !(distance[a][b].item<double>() <= beta)) {
      break;
    }
    const auto merged = (distance[a] + distance[b]) / 2.0;  // plain mean of the two rows
    distance[a] = merged;
    distance.select(1, a).copy_(merged);
    distance[a][a] = std::numeric_limits<double>::infinity();
    distance[b].fill_(std::numeric_limits<double>::infinity());
    distance.select(1, b).fill_(std::numeric_limits<double>::infinity());
    std::replace(label.begin(), label.end(), static_cast<int>(b), static_cast<int>(a));
  }
  return order_clusters_by_smallest_client(label, m);
}

}  // namespace cflrun::cluster
