#pragma once
/// @file
/// PACFL: clustered FL by principal angles between client data subspaces (Vahidian, Morafah et al.,
/// shared/papers/002; Algorithm 1 and Algorithm 2).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>
#include <cflrun/cluster/principal_angles.hpp>

namespace cflrun::algo {

/// --pacfl-proximity: smallest (Eq. 2) | sum (Eq. 3) | entrywise (official code).
inline constexpr core::ChoiceWords<cluster::Proximity, 3> kProximityWords{
    {{cluster::Proximity::kSmallestAngle, "smallest"},
     {cluster::Proximity::kSumOfAngles, "sum"},
     {cluster::Proximity::kSmallestEntrywiseAngle, "entrywise"}}};

/// --pacfl-signature: what a client's signature spans.
enum class SignatureScope {
  kClient,    ///< client: p singular vectors of all the client's data (Alg. 1).
  kPerLabel,  ///< per_label: p per label the client holds, stacked (official code).
};
inline constexpr core::ChoiceWords<SignatureScope, 2> kSignatureScopeWords{
    {{SignatureScope::kClient, "client"}, {SignatureScope::kPerLabel, "per_label"}}};

/// --pacfl-evaluation: which model a client's reported accuracy comes from.
enum class PacflEvaluation {
  kClusterModel,      ///< cluster_model: its cluster model after averaging, as every algorithm.
  kAfterLocalUpdate,  ///< after_local_update: its own model right after its last local update.
};
inline constexpr core::ChoiceWords<PacflEvaluation, 2> kPacflEvaluationWords{
    {{PacflEvaluation::kClusterModel, "cluster_model"},
     {PacflEvaluation::kAfterLocalUpdate, "after_local_update"}}};

/// PACFL's options (--pacfl-vectors, --pacfl-signature, --pacfl-proximity, --pacfl-beta,
/// --pacfl-clusters, --pacfl-evaluation).
struct PacflOptions : Options<PacflOptions> {
  int vectors = 3;  ///< p, singular vectors per client signature (PACFL: 3..5).
  cluster::Proximity proximity = cluster::Proximity::kSmallestAngle;  ///< --pacfl-proximity.
  SignatureScope signature = SignatureScope::kClient;                 ///< --pacfl-signature.
  double beta = 4.9;  ///< HC merge threshold in degrees (official pacfl.sh: 4.9).
  int clusters = 0;   ///< a fixed number of clusters instead of beta; 0 = use beta.
  /// cluster_model (every algorithm's metric: each client's cluster model after averaging) |
  /// after_local_update (the PACFL code's reported metric: each client's own model right after its
  /// last local update, before averaging; baselines-official-setup.md 3.2).
  PacflEvaluation evaluation = PacflEvaluation::kClusterModel;
  std::string title() const override { return "PACFL"; }
  void visit(core::OptionVisitor& v) override;
};

/// One-shot clustering, then per-cluster FedAvg. Before round 1 every client sends the p most
/// significant left singular vectors of its data matrix (its signature, Alg. 1 line 8); the server
/// builds the proximity matrix of principal angles (Eq. 2, or Eq. 3 with --pacfl-proximity sum) and
/// clusters it by hierarchical clustering with threshold beta (or into a fixed number of clusters);
/// every cluster model starts from the same initial model (line 12) and is the sample-weighted
/// average of its clients' local updates each round (lines 21-24). The assignment never changes,
/// so the recorded ARI is the same in every round.
///
/// Newcomers (Alg. 2, Proximity Matrix Extension): a client that was not present at the start is
/// assigned when it first participates: HC is rerun with the same beta on the proximity matrix
/// extended by the newcomers, and the newcomer joins the old cluster that holds most of the old
/// clients in its new cluster; if its new cluster holds none (the paper would start a new cluster
/// model), it joins the old cluster with the smallest mean angle to it. Old clients never move.
class Pacfl : public Algorithm {
 public:
  static constexpr const char* kName = "pacfl";
  static constexpr const char* kSummary =
      "PACFL: one-shot clustering by principal angles of the clients' data subspaces (Vahidian et "
      "al. 2023)";
  using Options = PacflOptions;
  /// @throws ConfigError if --pacfl-clusters exceeds the number of clients, or per-label
  ///         signatures are asked of data without classes.
  Pacfl(const PacflOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  /// Z, the number of clusters found; 1 before set_up.
  int num_models() const override { return num_clusters_; }
  Traits traits() const override {
    return {.clusters_clients = true,
            .same_initial_models = true,
            .no_model_count =
                "its hierarchical clustering of the signatures finds the number of "
                "clusters; --pacfl-beta or --pacfl-clusters sets it"};
  }
  /// The statistic: every client's signature (Alg. 1 line 8), cluster::data_signature of its
  /// training inputs ([d, p], d = floats of a sample) or, with --pacfl-signature per_label,
  /// cluster::per_label_data_signature ([d, p C]); flattened row-major, [d p] or [d p C] per
  /// client. The procedure, with --pacfl-evaluation after_local_update: train() is the standard
  /// local update followed by scoring the trained model on the client's test data (kept in the
  /// client's memory as "after_update_score", [2] float64 accuracy fraction and mean loss), and
  /// evaluate() returns that score (a client never trained yet: its cluster model's score). Else
  /// none (the standard client; local updates may then run on several threads).
  ClientSide client_side() const override;
  /// Every client's signature (QueryKind::kClientStatistics, all M clients: newcomers are placed
  /// later by their signatures); the clients in `initial` are clustered.
  std::vector<ClientQuery> set_up_queries(const std::vector<int>& initial) override;
  /// Clusters the initial clients by their signatures (cluster_signatures).
  /// @throws ShapeError if the answer is not [M, d p] (per label: [M, d p C]).
  void set_up(const std::vector<QueryAnswer>& answers) override;
  /// Clusters the clients `initial` (increasing ids) by their signatures and adopts the
  /// clustering; num_models() becomes the number of clusters Z.
  /// @param signatures  [M, d, p] float64 ([M, d, p C] per label), every client's signature.
  /// @return            [M] cluster of each client in [0, Z); -1 for clients not in `initial`.
  /// @throws ConfigError if signatures is not [M, d, p] with M = num_clients.
  std::vector<int> cluster_signatures(const torch::Tensor& signatures,
                                      const std::vector<int>& initial);
  /// The cluster of each participant; newcomers are placed as described above.
  RoundPlan plan(const RoundInput& input) override;
  /// round_traffic, plus each client's signature (d p floats, 4 bytes each) with its first update.
  RoundTraffic traffic(const RoundFacts& facts) const override;
  /// "cluster" [M] int64 (-1 = not yet placed), "proximity" [M, M] float64 degrees, "seen" [M]
  /// int64 (1 = the client sent its signature with an earlier update).
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  int place_newcomer(int client, const std::vector<int>& newcomers);
  /// C with --pacfl-signature per_label, else 0 (one signature of all the client's data).
  int signature_classes() const;
  /// Columns of a signature: --pacfl-vectors, times the classes per label.
  std::int64_t signature_columns() const;
  /// Floats of one signature, d x columns (d = AlgorithmContext::sample_size).
  std::int64_t signature_floats() const;

  PacflOptions options_;
  AlgorithmContext context_;
  int num_clusters_ = 1;
  std::vector<int> initial_;  // the clients clustered at set-up
  std::vector<int> cluster_;  // [M] cluster of each client, -1 until placed
  torch::Tensor proximity_;   // [M, M] degrees
  std::vector<std::int64_t>
      seen_;  // [M] 1 once the client sent its signature (with its first update)
  std::int64_t signatures_this_round_ =
      0;  // clients sending their signature with this round's update
};

}  // namespace cflrun::algo
