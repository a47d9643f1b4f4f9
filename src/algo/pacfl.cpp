#include <cflrun/algo/pacfl.hpp>

#include <algorithm>
#include <map>

#include <torch/torch.h>

#include <cflrun/cluster/principal_angles.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

torch::Tensor rows_and_columns(const torch::Tensor& matrix, const std::vector<int>& ids) {
  const auto index = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64);
  return matrix.index_select(0, index).index_select(1, index);
}

}  // namespace

Pacfl::Pacfl(const AlgorithmSettings& settings) : settings_(settings) {
  if (settings.pacfl_vectors < 1) {
    throw ConfigError("--pacfl-vectors must be at least 1, but got " + std::to_string(settings.pacfl_vectors));
  }
  if (settings.pacfl_clusters < 0 || settings.pacfl_clusters > settings.num_clients) {
    throw ConfigError("--pacfl-clusters must be between 0 (use --pacfl-beta) and the number of clients, " +
                      std::to_string(settings.num_clients) + ", but got " + std::to_string(settings.pacfl_clusters));
  }
}

std::vector<int> Pacfl::cluster_signatures(const torch::Tensor& signatures, const std::vector<int>& initial) {
  if (signatures.dim() != 3 || signatures.size(0) != settings_.num_clients) {
    throw ConfigError("pacfl: expected one signature per client, [" + std::to_string(settings_.num_clients) +
                      ", d, p], but got " + c10::str(signatures.sizes()));
  }
  const auto kind = settings_.pacfl_sum_of_angles ? cluster::Proximity::kSumOfAngles : cluster::Proximity::kSmallestAngle;
  proximity_ = cluster::proximity_matrix(signatures, kind);
  const auto labels = cluster::hierarchical_clustering(rows_and_columns(proximity_, initial), settings_.pacfl_beta,
                                                       std::min<int>(settings_.pacfl_clusters, initial.size()));
  std::vector<int> clusters(static_cast<std::size_t>(settings_.num_clients), -1);
  for (std::size_t i = 0; i < initial.size(); ++i) {
    clusters[static_cast<std::size_t>(initial[i])] = labels[i];
  }
  return clusters;
}

void Pacfl::adopt_clusters(const std::vector<int>& clusters) {
  cluster_ = clusters;
  num_clusters_ = std::max(1, *std::max_element(clusters.begin(), clusters.end()) + 1);
}

int Pacfl::place_newcomer(int client, const std::vector<int>& newcomers) {
  std::vector<int> members;  // old clients, then the newcomers (PME: A_old extended by the new rows)
  for (int c = 0; c < settings_.num_clients; ++c) {
    if (cluster_[static_cast<std::size_t>(c)] >= 0) {
      members.push_back(c);
    }
  }
  const auto old_count = members.size();
  members.insert(members.end(), newcomers.begin(), newcomers.end());
  const auto labels = cluster::hierarchical_clustering(rows_and_columns(proximity_, members), settings_.pacfl_beta);
  const auto at = std::find(members.begin(), members.end(), client) - members.begin();
  std::map<int, int> votes;  // old cluster -> old clients sharing the newcomer's new cluster
  for (std::size_t i = 0; i < old_count; ++i) {
    if (labels[i] == labels[static_cast<std::size_t>(at)]) {
      ++votes[cluster_[static_cast<std::size_t>(members[i])]];
    }
  }
  if (!votes.empty()) {
    return std::max_element(votes.begin(), votes.end(), [](auto a, auto b) { return a.second < b.second; })->first;
  }
  std::vector<double> sum(static_cast<std::size_t>(num_clusters_), 0.0);
  std::vector<int> count(static_cast<std::size_t>(num_clusters_), 0);
  for (std::size_t i = 0; i < old_count; ++i) {
    const auto k = static_cast<std::size_t>(cluster_[static_cast<std::size_t>(members[i])]);
    sum[k] += proximity_[client][members[i]].item<double>();
    ++count[k];
  }
  int best = 0;
  for (int k = 1; k < num_clusters_; ++k) {
    if (sum[k] / count[k] < sum[best] / count[best]) {
      best = k;
    }
  }
  return best;
}

std::vector<int> Pacfl::assign(int /*round*/, const std::vector<int>& participants, const torch::Tensor& /*loss_vectors*/) {
  std::vector<int> newcomers;
  for (int client : participants) {
    if (cluster_.at(static_cast<std::size_t>(client)) < 0) {
      newcomers.push_back(client);
    }
  }
  std::vector<int> placed;
  for (int client : newcomers) {
    placed.push_back(place_newcomer(client, newcomers));
  }
  for (std::size_t i = 0; i < newcomers.size(); ++i) {
    cluster_[static_cast<std::size_t>(newcomers[i])] = placed[i];
  }
  std::vector<int> models;
  for (int client : participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
  }
  return models;
}

}  // namespace cflrun::algo
