// The clients' answers to the server's queries on this rank (loss vectors, or the algorithm's own
// statistic through the run's services), gathered to rank 0 (round_exchange.hpp).
#include "experiment_state.hpp"

#include <cflrun/run/round_services.hpp>

namespace cflrun::run::detail {

std::vector<double> Experiment::answer_locally(const algo::ClientQuery& query, int round) {
  if (std::none_of(query.clients.begin(), query.clients.end(),
                   [&](int c) { return clients_->hosted().hosts(c); })) {
    return {};
  }
  switch (query.kind) {
    case algo::QueryKind::kLossVectors:
      return clients_->loss_vectors(*models_, query.clients);
    case algo::QueryKind::kClientStatistics: {
      if (!statistic_) {
        throw ConfigError(options_.algorithm +
                          " asked its clients for a statistic it has no client side for");
      }
      RoundServices services(*clients_, models_.get(), client_initial_model_,
                             local_update_settings());
      const torch::Tensor no_models;  // at set-up, before the models exist
      return clients_->client_statistics(*statistic_, services,
                                         models_ ? models_->states() : no_models, query.clients,
                                         round, options_.seed);
    }
  }
  throw ConfigError("unknown client query " + std::to_string(static_cast<int>(query.kind)));
}

std::vector<algo::QueryAnswer> Experiment::answer_queries(
    const std::vector<algo::ClientQuery>& queries, int round) {
  std::vector<std::vector<double>> local;
  for (const auto& query : queries) {
    local.push_back(answer_locally(query, round));
  }
  return gather_answers(queries, local);
}

std::int64_t answer_length(algo::QueryKind kind, int num_models,
                           const algo::ClientStatistic* statistic, std::int64_t state_size) {
  if (kind == algo::QueryKind::kLossVectors) {
    return num_models;
  }
  return statistic ? statistic->length(num_models, state_size) : 0;
}

std::vector<algo::QueryAnswer> Experiment::gather_answers(
    const std::vector<algo::ClientQuery>& queries, const std::vector<std::vector<double>>& local) {
  std::vector<std::int64_t> lengths;
  for (const auto& query : queries) {
    lengths.push_back(answer_length(query.kind, num_models_, statistic_.get(),
                                    models_ ? models_->state_size() : 0));
  }
  return run::gather_answers(comm_, queries, local, lengths);
}

PlanShape Experiment::plan_shape() const {
  return {num_clients_, num_models_, models_ ? models_->state_size() : 0};
}

}  // namespace cflrun::run::detail
