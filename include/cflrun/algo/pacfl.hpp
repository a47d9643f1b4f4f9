#pragma once
/// @file
/// PACFL: clustered FL by principal angles between client data subspaces (Vahidian, Morafah et al.,
/// shared/papers/002; Algorithm 1 and Algorithm 2).

#include <cflrun/algo/registry.hpp>

namespace cflrun::algo {

/// PACFL's options (--pacfl-vectors, --pacfl-signature, --pacfl-proximity, --pacfl-beta, --pacfl-clusters,
/// --pacfl-evaluation).
struct PacflOptions : Options<PacflOptions> {
  int vectors = 3;                     ///< p, singular vectors per client signature (PACFL: 3..5).
  std::string proximity = "smallest";  ///< smallest (Eq. 2) | sum (Eq. 3) | entrywise (official code).
  std::string signature = "client";    ///< client (Alg. 1: all the client's data) | per_label (official code).
  double beta = 4.9;                   ///< HC merge threshold in degrees (official pacfl.sh: 4.9).
  int clusters = 0;                    ///< a fixed number of clusters instead of beta; 0 = use beta.
  /// cluster_model (every algorithm's metric: each client's cluster model after averaging) |
  /// after_local_update (the PACFL code's reported metric: each client's own model right after its
  /// last local update, before averaging; baselines-official-setup.md 3.2).
  std::string evaluation = "cluster_model";
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
      "PACFL: one-shot clustering by principal angles of the clients' data subspaces (Vahidian et al. 2023)";
  using Options = PacflOptions;
  /// @throws ConfigError if --pacfl-clusters exceeds the number of clients.
  Pacfl(const PacflOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  /// Z, the number of clusters found; 1 before cluster_signatures.
  int num_models() const override { return num_clusters_; }
  Traits traits() const override {
    return {.clusters_clients = true,
            .same_initial_models = true,
            .signature_vectors = options_.vectors,
            .per_label_signatures = options_.signature == "per_label"};
  }
  /// With --pacfl-evaluation after_local_update: a client side whose train() is the standard local
  /// update followed by scoring the trained model on the client's test data (kept in the client's
  /// memory as "after_update_score", [2] float64 accuracy fraction and mean loss), and whose
  /// evaluate() returns that score (a client never trained yet: its cluster model's score). Else
  /// none (the standard client; local updates may then run on several threads).
  std::shared_ptr<ClientProcedure> client_procedure() const override;
  /// @throws ConfigError if signatures is not [M, d, p] with M = num_clients.
  std::vector<int> cluster_signatures(const torch::Tensor& signatures, const std::vector<int>& initial) override;
  /// The cluster of each participant; newcomers are placed as described above.
  RoundPlan plan(const RoundInput& input) override;
  /// "cluster" [M] int64 (-1 = not yet placed), "proximity" [M, M] float64 degrees.
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  int place_newcomer(int client, const std::vector<int>& newcomers);

  PacflOptions options_;
  AlgorithmContext context_;
  int num_clusters_ = 1;
  std::vector<int> cluster_;  // [M] cluster of each client, -1 until placed
  torch::Tensor proximity_;   // [M, M] degrees
};

}  // namespace cflrun::algo
