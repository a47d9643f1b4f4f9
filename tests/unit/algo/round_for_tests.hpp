#pragma once
// Helpers of the algorithm tests: a run's context, round inputs with hand-made answers, and the
// participants' part of a plan.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/registry.hpp>

namespace cflrun::algo::testing {

/// M clients of `samples` training samples each, K models, seed 7.
inline AlgorithmContext context_for(int clients, int models, std::int64_t samples = 100) {
  AlgorithmContext context;
  context.num_clients = clients;
  context.num_models = models;
  context.train_samples.assign(static_cast<std::size_t>(clients), samples);
  context.seed = 7;
  return context;
}

/// Client ids 0 .. m-1.
inline std::vector<int> everyone(int m) {
  std::vector<int> ids(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) {
    ids[static_cast<std::size_t>(i)] = i;
  }
  return ids;
}

/// Round `round` of `participants`, answering each query of `kind` with `values` ([n, L] float64).
inline RoundInput input_for(int round, std::vector<int> participants,
                            QueryKind kind = QueryKind::kLossVectors,
                            const torch::Tensor& values = torch::Tensor()) {
  RoundInput input;
  input.round = round;
  if (values.defined()) {
    input.answers.push_back({ClientQuery{kind, participants}, values});
  }
  input.participants = std::move(participants);
  return input;
}

/// The plan's assignment of the participants, in participant order.
inline std::vector<int> assigned(const RoundPlan& plan, const std::vector<int>& participants) {
  std::vector<int> models;
  for (int client : participants) {
    models.push_back(plan.assignment.at(static_cast<std::size_t>(client)));
  }
  return models;
}

/// `name` with its default options, or with `options` for that algorithm.
inline std::unique_ptr<Algorithm> make(const std::string& name, const AlgorithmContext& context,
                                       const core::OptionGroup* options = nullptr) {
  AlgorithmOptionSet set;
  if (options != nullptr) {
    return find_algorithm(name).make(*options, context);
  }
  return make_algorithm(name, set, context);
}

}  // namespace cflrun::algo::testing
