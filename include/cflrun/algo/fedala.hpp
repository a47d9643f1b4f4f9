#pragma once
/// @file
/// FedALA: adaptive local aggregation of the global model into each client's model (Zhang et al.
/// 2023, as PFLlib runs it, pfl-baselines-setup.md Sec. 4).

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// FedALA's options (--fedala-eta, --fedala-sample-percent, --fedala-layers).
struct FedAlaOptions : Options<FedAlaOptions> {
  double eta = 1.0;  ///< step size of the element-wise aggregation weights (PFLlib: 1.0).
  double sample_percent =
      80;  ///< s: percent of the client's training data ALA learns on (PFLlib: 80).
  int layers =
      2;  ///< p: trailing parameter tensors ALA adapts (PFLlib's layer_idx: 2 = the last Linear).
  std::string title() const override { return "FedALA"; }
  void visit(core::OptionVisitor& v) override;
};

/// The server averages the clients' models by sample count (FedAvg). Every client keeps its own
/// model, starting from the global one. After each round's aggregation every client (PFLlib: not
/// only the participants) rebuilds its model by adaptive local aggregation (ALA): its lower
/// parameter tensors take the global values; its last p tensors become theta_l + (theta_g -
/// theta_l) (.) W with element-wise weights W in [0, 1] (kept across rounds, first all ones),
/// learnt on a contiguous random slice of s% of its training data in batches of --batch-size:
/// per batch W <- clamp(W - eta g (.) (theta_g - theta_l), 0, 1), g the loss gradient at the
/// aggregated parameters. The first ALA of a client repeats passes until more than 10 last-batch
/// losses are recorded and the last 10 have a standard deviation below 0.1 (capped at 500 passes,
/// where PFLlib has no cap); later ALAs make one pass. ALA is skipped while the first parameter
/// tensor sums to the same under both models (PFLlib's test for an untrained client). The client
/// is scored on the result, which is also where its next local update starts. ARI is undefined.
class FedAla : public Algorithm {
 public:
  static constexpr const char* kName = "fedala";
  static constexpr const char* kSummary =
      "FedALA: each client adaptively mixes the global model into its own, element-wise (Zhang et "
      "al. 2023)";
  using Options = FedAlaOptions;
  /// @throws ConfigError with gradient averaging or without labels (ALA learns on the
  /// cross-entropy).
  FedAla(const FedAlaOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return 1; }
  Traits traits() const override {
    return {.clusters_clients = false,
            .keeps_local_models = true,
            .uses_client_initial_model = true,
            .evaluates_local_models = true,
            .local_models_start_from_server_model = true,
            .no_gradient_averaging = "clients train their own models",
            .no_model_count = "it keeps one global model and every client its own"};
  }
  ClientSide client_side() const override;
  /// Participants train their own (ALA-initialised) model; the global model is their average.
  RoundPlan plan(const RoundInput& input) override;

 private:
  FedAlaOptions options_;
  AlgorithmContext context_;
};

/// One adaptive local aggregation (FedALA Alg. 1 lines 6-13, PFLlib's
/// ALA.adaptive_local_aggregation). On return `model` holds the aggregated model: its lower tensors
/// are `global`'s, its last `layers` tensors theta_l + (theta_g - theta_l) (.) W.
/// @param model     the working model, overwritten.
/// @param global    [P] float32 global flat state; @param local [P] float32 the client's.
/// @param weights   the W tensors of the last `layers` parameter tensors (empty: ones), updated.
/// @param inputs, targets  the ALA sample, in order; batches of `batch_size`.
/// @param until_stable  the first ALA: repeat passes until the last 10 losses are stable.
/// @return passes made (0 if skipped because the first tensors agree).
int adaptive_local_aggregation(model::Network& model, const torch::Tensor& global,
                               const torch::Tensor& local, std::vector<torch::Tensor>& weights,
                               const torch::Tensor& inputs, const torch::Tensor& targets,
                               std::int64_t batch_size, double eta, int layers, bool until_stable,
                               model::Objective objective);

}  // namespace cflrun::algo
