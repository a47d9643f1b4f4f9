// The hosted clients' side of an algorithm with its own client procedure (algo::ClientProcedure):
// views of each client, reports, statistics and one-by-one scoring.
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
    throw ConfigError(std::string("ClientGroup::") + who + ": the algorithm has no client procedure");
  }
}

}  // namespace

void ClientGroup::set_procedure(std::shared_ptr<algo::ClientProcedure> procedure) {
  procedure_ = std::move(procedure);
  memories_.assign(static_cast<std::size_t>(size()), {});
}

algo::LocalClient ClientGroup::view(int i, int round, std::uint64_t seed) {
  const auto at = static_cast<std::size_t>(i);
  algo::LocalClient client;
  client.id = first_ + i;
  client.round = round;
  client.seed = seed;
  client.objective = objective_;
  client.train_inputs = train_.inputs.narrow(0, train_offsets_[at], train_counts_[at]);
  client.train_targets = train_.targets.narrow(0, train_offsets_[at], train_counts_[at]);
  const auto test_rows = test_.owner.eq(i).nonzero().flatten();
  client.test_inputs = test_.inputs.index_select(0, test_rows);
  client.test_targets = test_.targets.index_select(0, test_rows);
  if (local_states_.defined()) {
    local_views_.resize(static_cast<std::size_t>(size()));
    local_views_[at] = local_states_[i];  // a view: changes reach the local model
    client.local_model = &local_views_[at];
  }
  client.memory = &memories_[at];
  client.server_models = server_states_;
  return client;
}

std::vector<std::pair<int, std::vector<double>>> ClientGroup::take_reports() {
  auto reports = std::move(reports_);
  reports_.clear();
  return reports;
}

std::vector<double> ClientGroup::client_statistics(ModelSet& models, const std::vector<int>& clients, int round,
                                                   std::uint64_t seed) {
  require_procedure(procedure_, "client_statistics");
  Stopwatch watch(compute_seconds_);
  server_states_ = &models.states();
  std::vector<double> rows;
  for (const auto i : hosted_among(clients)) {
    auto client = view(static_cast<int>(i), round, seed);
    const auto values = procedure_->statistics(client, models.load(0));
    rows.insert(rows.end(), values.begin(), values.end());
  }
  return rows;
}

ClientEvaluation ClientGroup::evaluate_each(const std::vector<int>& assignment, bool local_models, ModelSet& models,
                                            const algo::AlgorithmState& payload, int round, std::uint64_t seed) {
  require_procedure(procedure_, "evaluate_each");
  server_states_ = &models.states();
  Stopwatch watch(compute_seconds_);
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  ClientEvaluation evaluation{std::vector<double>(static_cast<std::size_t>(size()), nan),
                              std::vector<double>(static_cast<std::size_t>(size()), nan)};
  for (int i = 0; i < size(); ++i) {
    const int model_index = assignment.at(static_cast<std::size_t>(first_ + i));
    if (model_index < 0 && !local_models) {
      continue;  // not participating
    }
    auto& model = local_models ? models.working_model() : models.load(model_index);
    if (local_models) {
      model::load_flat_state(model, local_states_[i]);
    }
    auto client = view(i, round, seed);
    const auto score = procedure_->evaluate(client, model, payload);
    evaluation.accuracy[static_cast<std::size_t>(i)] = score.accuracy;
    evaluation.test_loss[static_cast<std::size_t>(i)] = score.loss;
  }
  return evaluation;
}

}  // namespace cflrun::run
