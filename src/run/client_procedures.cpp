// The hosted clients' side of an algorithm with its own client procedure (algo::ClientProcedure):
// views of each client, reports and one-by-one scoring.
#include <cflrun/run/client_group.hpp>

#include "stopwatch.hpp"

#include <limits>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {
namespace {

void require_procedure(const std::shared_ptr<algo::ClientProcedure>& procedure, const char* who) {
  if (!procedure) {
    throw ConfigError(std::string("ClientGroup::") + who +
                      ": the algorithm has no client procedure");
  }
}

}  // namespace

void ClientGroup::set_procedure(std::shared_ptr<algo::ClientProcedure> procedure) {
  procedure_ = std::move(procedure);
  memories_.assign(static_cast<std::size_t>(size()), {});
}

algo::LocalClient ClientGroup::view(int i, int round, std::uint64_t seed,
                                    const torch::Tensor& server_states) {
  const auto at = static_cast<std::size_t>(i);
  algo::LocalClient client;
  client.id = first_ + i;
  client.round = round;
  client.seed = seed;
  client.objective = objective_;
  client.train_inputs = train_.inputs_of(i);
  client.train_targets = train_.targets_of(i);
  // Views, no copies: the stacks hold the hosted clients' samples one client after another.
  client.test_inputs = test_.inputs_of(i);
  client.test_targets = test_.targets_of(i);
  if (local_states_.defined()) {
    local_views_.resize(static_cast<std::size_t>(size()));
    local_views_[at] = local_states_[i];  // a view: changes reach the local model
    client.local_model = &local_views_[at];
  }
  client.memory = &memories_[at];
  client.server_models = &server_states;
  return client;
}

std::vector<std::pair<int, std::vector<double>>> ClientGroup::take_reports() {
  auto reports = std::move(reports_);
  reports_.clear();
  return reports;
}

ClientEvaluation ClientGroup::evaluate_each(const std::vector<int>& assignment, bool local_models,
                                            ModelSet& models, const algo::AlgorithmState& payload,
                                            int round, std::uint64_t seed) {
  require_procedure(procedure_, "evaluate_each");
  Stopwatch watch(compute_seconds_);
  std::vector<int> scored;  // the hosted clients with a model to score
  std::vector<algo::LocalClient> views;
  for (int i = 0; i < size(); ++i) {
    if (local_models ||
        assignment.at(static_cast<std::size_t>(first_ + i)) >= 0) {  // else not participating
      scored.push_back(i);
      views.push_back(view(i, round, seed, models.states()));
    }
  }
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  ClientEvaluation evaluation{std::vector<double>(static_cast<std::size_t>(size()), nan),
                              std::vector<double>(static_cast<std::size_t>(size()), nan)};
  const auto score = [&](std::size_t n, model::Network& model) {
    seed_dropout(model, scored[n], round, seed, core::Purpose::kFineTune);  // Per-FedAvg's step
    const auto result = procedure_->evaluate(views[n], model, payload);
    evaluation.accuracy[static_cast<std::size_t>(scored[n])] = result.accuracy;
    evaluation.test_loss[static_cast<std::size_t>(scored[n])] = result.loss;
  };
  const auto model_of = [&](int i) { return assignment.at(static_cast<std::size_t>(first_ + i)); };
  if (procedure_on_threads()) {
    on_threads(models, scored.size(), [&](std::size_t n, model::Network& network) {
      model::load_flat_state(
          network, local_models ? local_states_[scored[n]] : models.states()[model_of(scored[n])]);
      network.train();
      score(n, network);
    });
    return evaluation;
  }
  for (std::size_t n = 0; n < scored.size(); ++n) {
    auto& model = local_models ? models.working_model() : models.load(model_of(scored[n]));
    if (local_models) {
      model::load_flat_state(model, local_states_[scored[n]]);
    }
    score(n, model);
  }
  return evaluation;
}

}  // namespace cflrun::run
