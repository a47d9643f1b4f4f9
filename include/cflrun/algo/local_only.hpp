#pragma once
/// @file
/// Local-only: every client trains its own model on its own data; nothing is shared.

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// M models, client i always trains model i (the "local model" baseline of IFCA Sec. 6 and of
/// the CLoVE paper's tables). Averaging over a single client returns its own parameters, so the
/// shared machinery needs no special case. No clustering: ARI is undefined.
class LocalOnly : public Algorithm {
 public:
  static constexpr const char* kName = "local";
  static constexpr const char* kSummary = "Local-only: every client trains its own model";
  using Options = NoOptions;
  LocalOnly(const NoOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_clients; }
  Traits traits() const override {
    return {.clusters_clients = false, .no_model_count = "every client keeps its own model"};
  }
  RoundPlan plan(const RoundInput& input) override;

 private:
  AlgorithmContext context_;
};

}  // namespace cflrun::algo
