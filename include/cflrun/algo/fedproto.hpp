#pragma once
/// @file
/// FedProto: federated prototype learning (Tan et al. 2022, as PFLlib runs it,
/// pfl-baselines-setup.md Sec. 3): clients share per-class mean features, never weights.

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/registry.hpp>

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
            .no_gradient_averaging = "clients train their own models"};
  }
  ClientSide client_side() const override;
  /// Every participant trains its own model; the payload holds the global prototypes.
  RoundPlan plan(const RoundInput& input) override;
  /// Reports [n, C d + C]: each client's prototypes, then its class counts.
  void receive_reports(int round, const std::vector<int>& clients,
                       const torch::Tensor& reports) override;
  AlgorithmState evaluation_payload(int round) const override;
  /// Prototypes instead of models: the server sends the C x d global prototypes to every client
  /// and each trained client returns its C x d prototypes and C counts (float32).
  RoundTraffic traffic(const RoundFacts& facts) const override;
  /// "prototypes" [C, d] float64, "present" [C] float64 (1 = the class has a global prototype).
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  AlgorithmState prototype_payload() const;

  FedProtoOptions options_;
  AlgorithmContext context_;
  torch::Tensor prototypes_;  // [C, d] float64
  torch::Tensor present_;     // [C] float64 0/1
};

/// The prototype regulariser's targets of FedProto and FedPAC: each sample's global prototype
/// payload["prototypes"][label] where payload["present"][label] > 0, else the sample's own
/// (detached) features, which add 0 to MSE(features, targets) (PFLlib). [n, d] like `features`.
torch::Tensor prototype_targets(const torch::Tensor& features, const torch::Tensor& labels,
                                const AlgorithmState& payload);

/// Per-class means of features: [C, d] float64 means (0 where a class has no sample) and [C]
/// float64 counts. @param features [n, d]; @param labels [n] int64 in [0, C).
std::pair<torch::Tensor, torch::Tensor> class_means(const torch::Tensor& features,
                                                    const torch::Tensor& labels, int num_classes);

/// FedProto's inference: for each row of `features` [n, d], the class whose prototype is nearest
/// in mean squared distance among the classes with present[k] > 0. @return [n] int64 classes;
/// all -1 if no class is present.
torch::Tensor nearest_prototype(const torch::Tensor& features, const torch::Tensor& prototypes,
                                const torch::Tensor& present);

/// The server's global prototypes from client reports: P_k = plain mean of the reported class-k
/// prototypes over the clients with a positive class-k count. @param prototypes [n, C, d],
/// @param counts [n, C]. @return ([C, d] float64, [C] float64 present 0/1).
std::pair<torch::Tensor, torch::Tensor> average_prototypes(const torch::Tensor& prototypes,
                                                           const torch::Tensor& counts);

}  // namespace cflrun::algo
