// A rank's clients through a round: set-up, local updates, reports and scores
// (include/cflrun/run/clients/client_group.hpp); their queries are in client_queries.cpp.
#include <cflrun/run/clients/client_group.hpp>

#include "../stopwatch.hpp"
#include "executors.hpp"
#include "stacked_scores.hpp"

#include <limits>

namespace cflrun::run {

ClientGroup::ClientGroup(const data::ClientData& data, int first, int end,
                         model::Objective objective, torch::Device device)
    : clients_(data, first, end, objective, device),
      procedure_(std::make_shared<algo::StandardClient>()),
      executor_(std::make_unique<detail::SerialExecutor>(clients_, *procedure_)) {}

void ClientGroup::set_up(std::shared_ptr<algo::ClientProcedure> procedure,
                         const ExecutionSettings& execution, const model::Network& reference) {
  procedure_ = std::move(procedure);
  clients_.clear_memories();
  executor_ = make_client_executor(clients_, *procedure_, execution, reference, not_taken_);
}

std::string ClientGroup::execution() const {
  return executor_->describe() + (not_taken_.empty() ? "" : " (" + not_taken_ + ")");
}

std::vector<ClientStart> ClientGroup::training_starts(const algo::RoundPlan& plan) const {
  std::vector<ClientStart> starts;
  for (int i = 0; i < size(); ++i) {
    const int start = plan.start.at(static_cast<std::size_t>(clients_.first_client() + i));
    if (start == algo::kLocalModel) {
      clients_.local_model(i);  // throws if the clients keep none
    }
    if (start != algo::kNoUpdate) {
      starts.push_back({i, start});
    }
  }
  return starts;
}

void ClientGroup::local_updates(const algo::RoundPlan& plan, ModelSet& models, int round,
                                std::uint64_t seed, const local::LocalUpdateSettings& settings,
                                const ReceiveTrained& receive, std::vector<double>& train_loss) {
  Stopwatch watch(compute_seconds_);
  train_loss.assign(static_cast<std::size_t>(size()), std::numeric_limits<double>::quiet_NaN());
  auto local = settings;
  if (plan.proximal_weights.defined()) {
    local.proximal.centers = models.states();
  }
  const auto starts = training_starts(plan);
  const auto trained = executor_->train({plan, models, round, seed, local}, starts);
  for (std::size_t n = 0; n < starts.size(); ++n) {  // in client order
    const int i = starts[n].i;
    const int client = clients_.first_client() + i;
    train_loss[static_cast<std::size_t>(i)] = trained[n].loss;
    if (procedure_->report_length() > 0) {
      reports_.emplace_back(client, trained[n].report);
    }
    if (!settings.gradient_averaging) {
      clients_.keep_trained(i, trained[n].result);
    }
    receive(client, trained[n].result.to(torch::kFloat64));
  }
}

std::vector<std::pair<int, std::vector<double>>> ClientGroup::take_reports() {
  auto reports = std::move(reports_);
  reports_.clear();
  return reports;
}

ClientEvaluation ClientGroup::evaluate(const std::vector<int>& assignment, bool local_models,
                                       ModelSet& models, const algo::AlgorithmState& payload,
                                       int round, std::uint64_t seed) {
  Stopwatch watch(compute_seconds_);
  if (!procedure_->scores_as_is()) {
    return evaluate_each(assignment, local_models, models, payload, round, seed);
  }
  return local_models ? detail::scores_of_local_models(clients_, models)
                      : detail::scores_by_assignment(clients_, *executor_, assignment, models,
                                                     clients_.test());
}

ClientEvaluation ClientGroup::evaluate_each(const std::vector<int>& assignment, bool local_models,
                                            ModelSet& models, const algo::AlgorithmState& payload,
                                            int round, std::uint64_t seed) {
  std::vector<ClientStart> scored;  // the hosted clients with a model to score
  for (int i = 0; i < size(); ++i) {
    const int model = assignment.at(static_cast<std::size_t>(clients_.first_client() + i));
    if (local_models || model >= 0) {  // else not participating
      scored.push_back({i, local_models ? algo::kLocalModel : model});
    }
  }
  const auto scores = executor_->evaluate({models, payload, round, seed}, scored);
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  ClientEvaluation evaluation{std::vector<double>(static_cast<std::size_t>(size()), nan),
                              std::vector<double>(static_cast<std::size_t>(size()), nan)};
  for (std::size_t n = 0; n < scored.size(); ++n) {
    evaluation.accuracy[static_cast<std::size_t>(scored[n].i)] = scores[n].accuracy;
    evaluation.test_loss[static_cast<std::size_t>(scored[n].i)] = scores[n].loss;
  }
  return evaluation;
}

double ClientGroup::take_compute_seconds() {
  const double seconds = compute_seconds_;
  compute_seconds_ = 0.0;
  return seconds;
}

}  // namespace cflrun::run
