#pragma once
/// @file
/// FedAvg (McMahan et al. 2017): one global model trained by every client.

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// One model; every participant trains it each round and the server takes the sample-weighted
/// average (CLoVE Alg. 1 with K = 1, as the paper notes in Sec. 3). No clustering: ARI is
/// undefined.
class FedAvg : public Algorithm {
 public:
  static constexpr const char* kName = "fedavg";
  static constexpr const char* kSummary =
      "FedAvg: one global model, sample-weighted averaging (McMahan et al. 2017)";
  using Options = NoOptions;
  FedAvg(const NoOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return 1; }
  Traits traits() const override {
    return {.clusters_clients = false, .no_model_count = "it keeps one global model"};
  }
  RoundPlan plan(const RoundInput& input) override;

 private:
  AlgorithmContext context_;
};

}  // namespace cflrun::algo
