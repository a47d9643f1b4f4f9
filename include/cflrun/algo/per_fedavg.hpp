#pragma once
/// @file
/// Per-FedAvg: personalised federated learning by model-agnostic meta-learning (Fallah et al. 2020;
/// first-order variant as PFLlib runs it, pfl-baselines-setup.md Sec. 2).

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// Per-FedAvg's options (--perfedavg-alpha, --perfedavg-beta).
struct PerFedAvgOptions : Options<PerFedAvgOptions> {
  double alpha =
      0.005;  ///< inner (personalisation) step size; PFLlib: the local learning rate 0.005.
  double beta =
      0.005;  ///< outer (meta) step size; PFLlib sets it to the local learning rate as well.
  std::string title() const override { return "Per-FedAvg"; }
  void visit(core::OptionVisitor& v) override;
};

/// One global model, averaged over the participants by sample count as FedAvg (PFLlib). A client's
/// local update is the first-order MAML step of F_i(w) = f_i(w - alpha grad f_i(w)) on mini-batches
/// of 2B samples (B = --batch-size; a last incomplete batch is dropped, as PFLlib's loader): with
/// the first half, w~ = w - alpha grad f(w); with the second, w <- w - beta grad f(w~) (Fallah et
/// al. Alg. 1, FO variant). PFLlib's server calls the local update twice per round, so a round runs
/// 2 x --local-epochs passes. A client is scored after one personalisation step w - alpha grad f(w)
/// on the first B samples of a fresh shuffle of its training data. --optimizer and --lr do not
/// apply: the steps are the plain gradient steps of the method.
class PerFedAvg : public Algorithm {
 public:
  static constexpr const char* kName = "perfedavg";
  static constexpr const char* kSummary =
      "Per-FedAvg: first-order MAML local steps, scored after one fine-tuning step (Fallah et al. "
      "2020)";
  using Options = PerFedAvgOptions;
  /// @throws ConfigError with gradient averaging.
  PerFedAvg(const PerFedAvgOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return 1; }
  Traits traits() const override {
    return {.clusters_clients = false,
            .no_gradient_averaging = "clients send meta-trained models",
            .no_model_count = "it keeps one global model"};
  }
  ClientSide client_side() const override;
  RoundPlan plan(const RoundInput& input) override;

 private:
  PerFedAvgOptions options_;
  AlgorithmContext context_;
};

/// One first-order MAML step (Per-FedAvg, Fallah et al. Alg. 1): w~ = w - alpha grad f(w; first
/// batch), then w <- w - beta grad f(w~; second batch), on `model`'s parameters in place.
/// @return the loss f(w; first batch) (the objective's units).
double meta_step(model::Network& model, model::Objective objective,
                 const torch::Tensor& first_inputs, const torch::Tensor& first_targets,
                 const torch::Tensor& second_inputs, const torch::Tensor& second_targets,
                 double alpha, double beta);

}  // namespace cflrun::algo
