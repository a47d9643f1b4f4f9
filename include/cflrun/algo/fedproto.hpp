#pragma once
/// @file
/// FedProto: federated prototype learning (Tan et al. 2022, as PFLlib runs it,
/// pfl-baselines-setup.md Sec. 3): clients share per-class mean features, never weights.

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/prototypes.hpp>
#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// FedProto's options (--fedproto-lambda).
struct FedProtoOptions : Options<FedProtoOptions> {
  double lambda = 1.0;  ///< weight of the prototype regulariser (PFLlib's lamda: 1.0).
  std::string title() const override { return "FedProto"; }
  void visit(core::OptionVisitor& v) override;
};

/// Every client keeps a private model (body + head, model::Network::features/head); nothing of it
/// is shared. A local update minimises CE(head(body(x)), y) + lambda MSE(body(x), P_y) with P the
/// global prototypes (a sample whose class has no global prototype adds 0; MSE averaged over the
/// batch and the feature dimensions), and collects the body's features of every batch (detached,
/// as trained); the client's prototype of class k is the mean of its collected class-k features.
/// The server's global prototype P_k is the plain mean of the prototypes of class k over the
/// clients that have it (PFLlib; the paper weights them by the clients' class counts); a class no
/// client reported this round has none. Clients are scored by nearest prototype: the class whose
/// global prototype is nearest (mean squared distance) to the body's features; the test loss is
/// the head's cross-entropy. ARI is undefined.
class FedProto : public Algorithm {
 public:
  static constexpr const char* kName = "fedproto";
  static constexpr const char* kSummary =
      "FedProto: clients share class prototypes of their features, not weights (Tan et al. 2022)";
  using Options = FedProtoOptions;
  /// @throws ConfigError unless the model is a classifier with a body/head split (cnn, fedavg_cnn,
  ///         cifar_cnn, mlp) trained on labels, or with gradient averaging.
  FedProto(const FedProtoOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  /// One unused server model: the clients' models are their own.
  int num_models() const override { return 1; }
  Traits traits() const override {
    return {.clusters_clients = false,
            .keeps_local_models = true,
            .uses_client_initial_model = true,
            .evaluates_local_models = true,
            .no_gradient_averaging = "clients train their own models",
            .no_model_count = "every client keeps its own model"};
  }
  ClientSide client_side() const override;
  /// Every participant trains its own model; the payload holds the global prototypes.
  RoundPlan plan(const RoundInput& input) override;
  /// Reports [n, C d + C]: each client's prototypes, then its class counts. Returns the new
  /// global prototypes, which the clients are scored with.
  AlgorithmState receive_reports(int round, const std::vector<int>& clients,
                                 const torch::Tensor& reports) override;
  /// Prototypes instead of models: the server sends the C x d global prototypes to every client
  /// and each trained client returns its C x d prototypes and C counts (float32).
  RoundTraffic traffic(const RoundFacts& facts) const override;
  /// "prototypes" [C, d] float64, "present" [C] float64 (1 = the class has a global prototype).
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  FedProtoOptions options_;
  AlgorithmContext context_;
  GlobalPrototypes prototypes_;
};

}  // namespace cflrun::algo
