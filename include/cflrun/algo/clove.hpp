#pragma once
/// @file
/// CLoVE: Clustering of Loss Vector Embeddings (CLoVE paper, Alg. 1, Option I model averaging).

#include <functional>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>
#include <cflrun/cluster/clove_assignment.hpp>

namespace cflrun::algo {

/// --kmeans-init: how k-means++ seeds each restart (cluster/kmeans_plus_plus.hpp).
enum class KMeansInit {
  kPlusPlus,  ///< plus_plus: one candidate per step (the paper).
  kGreedy,    ///< greedy: scikit-learn's 2 + ln k candidates (the official code's KMeans).
};
inline constexpr core::ChoiceWords<KMeansInit, 2> kKMeansInitWords{
    {{KMeansInit::kPlusPlus, "plus_plus"}, {KMeansInit::kGreedy, "greedy"}}};

/// --loss-transform: what is clustered and matched (paper Sec. 4, Table 12).
enum class LossTransform {
  kIdentity,    ///< identity: the loss vectors.
  kSquareRoot,  ///< sqrt: their element-wise square roots (the paper's SLV analysis).
};
inline constexpr core::ChoiceWords<LossTransform, 2> kLossTransformWords{
    {{LossTransform::kIdentity, "identity"}, {LossTransform::kSquareRoot, "sqrt"}}};

/// --clustering: kmeans | agglomerative (Ward, Table 12 row 1902).
inline constexpr core::ChoiceWords<cluster::Clusterer, 2> kClustererWords{
    {{cluster::Clusterer::kKMeans, "kmeans"},
     {cluster::Clusterer::kAgglomerativeWard, "agglomerative"}}};

/// --matching: hungarian | none (the no-matching ablation, Table 12 row 1901).
inline constexpr core::ChoiceWords<cluster::Matching, 2> kMatchingWords{
    {{cluster::Matching::kMinCost, "hungarian"}, {cluster::Matching::kNone, "none"}}};

/// --select-k: how many clusters CLoVE forms each round.
enum class KSelection {
  kFixed,       ///< fixed: K-hat, all the models.
  kSilhouette,  ///< silhouette: K in 2..K-hat by the silhouette of Ward clusterings (unknown K).
};
inline constexpr core::ChoiceWords<KSelection, 2> kKSelectionWords{
    {{KSelection::kFixed, "fixed"}, {KSelection::kSilhouette, "silhouette"}}};

/// CLoVE's options (--kmeans-restarts, --kmeans-init, --loss-transform, --clustering, --matching,
/// --select-k).
struct CloveOptions : Options<CloveOptions> {
  int kmeans_restarts = 10;  ///< k-means++ starts per round (the official code: 1).
  KMeansInit kmeans_init = KMeansInit::kPlusPlus;               ///< --kmeans-init.
  LossTransform loss_transform = LossTransform::kIdentity;      ///< --loss-transform.
  cluster::Clusterer clustering = cluster::Clusterer::kKMeans;  ///< --clustering.
  cluster::Matching matching = cluster::Matching::kMinCost;     ///< --matching.
  KSelection select_k = KSelection::kFixed;                     ///< --select-k.
  std::string title() const override { return "CLoVE"; }
  void visit(core::OptionVisitor& v) override;
};

/// Each round every participant sends its loss vector (its mean training loss on each of the K
/// models); the server clusters the loss vectors with k-means (k-means++ seeding, restarts, K
/// clusters), orders the clusters by their smallest client id and matches them to the K models
/// by min-cost bipartite matching (Hungarian algorithm), the cost of cluster c on model j being
/// the sum of c's clients' losses on j (Alg. 1 lines 5-10; clove-official-setup.md Sec. 11).
/// Every participant then trains its cluster's model, and each model becomes the sample-weighted
/// average of its clients (line 14). With --first-assignment random round 1 is assigned at random.
/// Variants (CloveOptions): square-root loss vectors, Ward clustering, no matching, unknown K.
class Clove : public Algorithm {
 public:
  static constexpr const char* kName = "clove";
  static constexpr const char* kSummary =
      "CLoVE: k-means on loss vectors, min-cost matching to models (CLoVE Alg. 1)";
  using Options = CloveOptions;
  /// @throws ConfigError if K is not in [1, M].
  Clove(const CloveOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_models; }
  Traits traits() const override {
    return {.clusters_clients = true, .records_loss_vectors = true};
  }
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  RoundPlan plan(const RoundInput& input) override;

 private:
  std::vector<int> assign(int round, const torch::Tensor& loss_vectors) const;

  CloveOptions options_;
  AlgorithmContext context_;
};

/// The loss-vector query of CLoVE and IFCA: every participant, except in round 1 under a random
/// first assignment.
std::vector<ClientQuery> loss_vector_queries(int round, const std::vector<int>& participants,
                                             const AlgorithmContext& context);

/// The plan of CLoVE and IFCA: in round 1 under a random first assignment the official code's
/// random assignment, else `assign` of the checked [m, K] loss vectors; each participant trains
/// its model (hard_plan). @throws as check_loss_vectors.
RoundPlan loss_vector_plan(const RoundInput& input, const AlgorithmContext& context,
                           const std::function<std::vector<int>(const torch::Tensor&)>& assign);

}  // namespace cflrun::algo
