#include <cflrun/algo/clove.hpp>

#include <cflrun/cluster/clove_assignment.hpp>
#include <cflrun/cluster/select_best_k.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

void CloveOptions::visit(core::OptionVisitor& v) {
  v.option("kmeans-restarts", kmeans_restarts,
           "clove: k-means++ starts per round; the lowest inertia wins (count)",
           core::Range::at_least(1));
  v.option("kmeans-init", kmeans_init,
           "clove: plus_plus | greedy: k-means++ with one candidate per step (paper) or "
           "scikit-learn's greedy 2 + ln K candidates (official code)",
           kKMeansInitWords);
  v.option("loss-transform", loss_transform,
           "clove: identity | sqrt: cluster and match sqrt(loss) (paper Sec. 4, Table 12)",
           kLossTransformWords);
  v.option("clustering", clustering,
           "clove: kmeans | agglomerative: how the loss vectors are clustered (agglomerative = "
           "Ward, Table 12)",
           kClustererWords);
  v.option(
      "matching", matching,
      "clove: hungarian | none: how clusters map to models (none = ablation, cluster i -> model i)",
      kMatchingWords);
  v.option("select-k", select_k,
           "clove: fixed | silhouette: use all K-hat models, or pick K in 2..K-hat each round by "
           "the silhouette score of Ward clusterings (selectBestK, unknown K)",
           kKSelectionWords);
}

std::vector<ClientQuery> loss_vector_queries(int round, const std::vector<int>& participants,
                                             const AlgorithmContext& context) {
  if (round == 0 && context.random_first_assignment) {
    return {};
  }
  return {ClientQuery{QueryKind::kLossVectors, participants}};
}

Clove::Clove(const CloveOptions& options, const AlgorithmContext& context)
    : options_(options), context_(context) {
  check_model_count(context);
}

std::vector<ClientQuery> Clove::queries(int round, const std::vector<int>& participants) {
  return loss_vector_queries(round, participants, context_);
}

RoundPlan loss_vector_plan(const RoundInput& input, const AlgorithmContext& context,
                           const std::function<std::vector<int>(const torch::Tensor&)>& assign) {
  const auto m = static_cast<int>(input.participants.size());
  std::vector<int> models;
  if (input.answers.empty()) {  // round 1 under --first-assignment random
    models = random_first_assignment(m, context.num_models, context.seed);
  } else {
    const auto& losses = answer_of(input, QueryKind::kLossVectors).values;
    check_loss_vectors(losses, m, context.num_models);
    models = assign(losses);
  }
  return hard_plan(input.participants, models, context.num_models, context.train_samples);
}

RoundPlan Clove::plan(const RoundInput& input) {
  return loss_vector_plan(input, context_,
                          [&](const torch::Tensor& losses) { return assign(input.round, losses); });
}

std::vector<int> Clove::assign(int round, const torch::Tensor& loss_vectors) const {
  cluster::KMeansOptions kmeans;
  kmeans.restarts = options_.kmeans_restarts;
  kmeans.seeding_candidates = options_.kmeans_init == KMeansInit::kGreedy ? 0 : 1;
  auto engine = core::make_engine(context_.seed, core::Purpose::kClustering, 0,
                                  static_cast<std::uint64_t>(round));
  // The square-root loss vectors (SLV) of the paper's analysis (Sec. 4) are clustered and matched
  // instead of the losses when asked (official code: loss_transform = square_root).
  const auto points =
      options_.loss_transform == LossTransform::kSquareRoot ? loss_vectors.sqrt() : loss_vectors;
  const auto matching = options_.matching;
  if (options_.select_k == KSelection::kSilhouette && context_.num_models >= 2) {
    // Unknown K (ICML version): the server keeps K-hat models and picks K by silhouette each round.
    const auto chosen = cluster::select_best_k(points, context_.num_models);
    return cluster::match_clusters_to_models(points, chosen.labels, chosen.k, matching);
  }
  return cluster::assign_by_loss_vector_clustering(points, kmeans, engine, matching,
                                                   options_.clustering);
}

}  // namespace cflrun::algo
