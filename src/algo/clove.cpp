#include <cflrun/algo/clove.hpp>

#include <cflrun/cluster/clove_assignment.hpp>
#include <cflrun/cluster/select_best_k.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

Clove::Clove(const AlgorithmSettings& settings) : settings_(settings) {
  check_model_count(settings.num_clients, settings.num_clusters);
}

bool Clove::needs_loss_vectors(int round) const {
  return !(round == 0 && settings_.random_first_assignment);
}

std::vector<int> Clove::assign(int round, const std::vector<int>& participants, const torch::Tensor& loss_vectors) {
  if (!needs_loss_vectors(round)) {
    return random_first_assignment(static_cast<int>(participants.size()), settings_.num_clusters, settings_.seed);
  }
  check_loss_vectors(loss_vectors, static_cast<int>(participants.size()), settings_.num_clusters);
  cluster::KMeansOptions options;
  options.restarts = settings_.kmeans_restarts;
  auto engine = core::make_engine(settings_.seed, core::Purpose::kClustering, 0,
                                  static_cast<std::uint64_t>(round));
  // The square-root loss vectors (SLV) of the paper's analysis (Sec. 4) are clustered and matched
  // instead of the losses when asked (official code: loss_transform = square_root).
  const auto points = settings_.sqrt_loss_vectors ? loss_vectors.sqrt() : loss_vectors;
  const auto matching = settings_.min_cost_matching ? cluster::Matching::kMinCost : cluster::Matching::kNone;
  if (settings_.select_k && settings_.num_clusters >= 2) {
    // Unknown K (ICML version): the server keeps K-hat models and picks K by silhouette each round.
    const auto chosen = cluster::select_best_k(points, settings_.num_clusters);
    return cluster::match_clusters_to_models(points, chosen.labels, chosen.k, matching);
  }
  return cluster::assign_by_loss_vector_clustering(
      points, options, engine, matching,
      settings_.agglomerative ? cluster::Clusterer::kAgglomerativeWard : cluster::Clusterer::kKMeans);
}

}  // namespace cflrun::algo
