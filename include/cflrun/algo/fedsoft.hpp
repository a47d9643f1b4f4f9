#pragma once
/// @file
/// FedSoft: soft clustered federated learning with proximal local updating (Ruan et al.,
/// shared/papers/004, Algorithm 1, Eq. 4 and Eq. 6).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// --fedsoft-optimizer: whether a client keeps its optimizer's state across rounds.
enum class KeptOptimizer {
  kFresh,       ///< fresh: a new optimizer per local update, as every cflrun algorithm.
  kPersistent,  ///< persistent: each client keeps its Adam (or SGD momentum) state (official).
};
inline constexpr core::ChoiceWords<KeptOptimizer, 2> kKeptOptimizerWords{
    {{KeptOptimizer::kFresh, "fresh"}, {KeptOptimizer::kPersistent, "persistent"}}};

/// FedSoft's options (--fedsoft-interval, --fedsoft-selection, --fedsoft-mu, --fedsoft-smoother,
/// --fedsoft-optimizer).
struct FedSoftOptions : Options<FedSoftOptions> {
  int interval = 2;  ///< tau, rounds between importance estimates (official main.py: 2).
  int selection =
      15;  ///< clients drawn per center each round (official main.py: 15); 0 = all, weighted.
  double mu = 0.1;  ///< proximal weight (official: 0.01 CIFAR, 0.1 MNIST, 1.0 linear regression).
  double smoother = 1e-4;  ///< sigma, the counter smoother (paper Sec. 5: 1e-4).
  KeptOptimizer optimizer = KeptOptimizer::kFresh;  ///< --fedsoft-optimizer.
  std::string title() const override { return "FedSoft"; }
  void visit(core::OptionVisitor& v) override;
};

/// The server side of FedSoft. Every client's data is a mixture of K source distributions and the
/// server keeps K centers c_s. Every tau rounds each client estimates its importance weights u_k
/// (the share of its samples on which center s has the smallest loss, zero counts smoothed by
/// sigma; soft_clustering.hpp). Every round the server turns them into aggregation weights v_sk
/// (Eq. 6) and, for every center, draws `selection` clients with probabilities v_s without
/// replacement; each selected client updates its own persistent local model on
/// F_k(w) + (mu / 2) sum_s u_ks ||w - c_s||^2 (Eq. 4), and each center becomes the plain average of
/// the local models of the clients drawn for it (Alg. 1 line 22; the official code's
/// `_aggregate_fedsoft`). With selection = 0 every client trains and center s is the v_s-weighted
/// average of all local models (the official code's do_selection = False).
///
/// The hard view used for ARI and /clients/assignment is each client's dominant center, the
/// argmax of its latest u (ties to the lowest index). Clients are scored on their local models.
/// Local solver: by default a fresh Adam per update (the paper allows any local solver); with
/// --fedsoft-optimizer persistent each client keeps its Adam across rounds as the official client
/// does. Every client's local model starts from one client initial model, separate from the K
/// centers (official code).
class FedSoft : public Algorithm {
 public:
  static constexpr const char* kName = "fedsoft";
  static constexpr const char* kSummary =
      "FedSoft: soft clustering by importance weights, proximal local updates (Ruan et al. 2022)";
  using Options = FedSoftOptions;
  /// @throws ConfigError naming the flag if --fedsoft-selection exceeds M, K is not in [1, M], or
  ///         the run asks for what FedSoft does not do (--participation < 1, gradient averaging,
  ///         --cluster-layers, --stable-rounds, --newcomers).
  FedSoft(const FedSoftOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_models; }
  Traits traits() const override {
    return {.clusters_clients = true,
            .keeps_local_models = true,
            .uses_client_initial_model = true,
            .evaluates_local_models = true,
            .keeps_optimizers = options_.optimizer == KeptOptimizer::kPersistent,
            .proximal_mu = options_.mu,
            .no_gradient_averaging = "centers average local models",
            .no_partial_participation = "it draws clients per cluster: --fedsoft-selection",
            .no_newcomers = "every client keeps a local model from round 1",
            .no_cluster_layers = "weight sharing is IFCA's"};
  }
  std::vector<ExtraDataset> extra_datasets() const override;
  /// The clients' importance weights (FedSoft Alg. 1 lines 5-12, algo::importance_weights of the
  /// per-sample training losses under every center, --fedsoft-smoother), [K] per client.
  ClientSide client_side() const override;
  /// Every tau rounds: importance weights of every client (QueryKind::kClientStatistics).
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  /// Draws from the (seed, kClientSelection, 0, round) stream.
  /// @throws ShapeError if the importance weights are not [M, K].
  RoundPlan plan(const RoundInput& input) override;
  /// /clients/importance: the latest importance weights, [M, K].
  ExtraValues record(int round) const override;
  RoundTraffic traffic(const RoundFacts& facts) const override;
  /// "importance" [M, K] float64, the latest estimates.
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

  /// The aggregation weights of a round (Eq. 6 and the per-center selection), [K, M] float64: row s
  /// sums to 1; 0 = client k does not contribute to center s.
  torch::Tensor contributions(int round, const torch::Tensor& importance) const;

 private:
  FedSoftOptions options_;
  AlgorithmContext context_;
  torch::Tensor importance_;  // [M, K] float64, the latest estimates
};

}  // namespace cflrun::algo
