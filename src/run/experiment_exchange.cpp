// The clients' answers to the server's queries on this rank (loss vectors, or the algorithm's own
// statistic through the run's services), gathered to rank 0 (round_exchange.hpp).
#include "experiment_state.hpp"

#include <cflrun/run/round_services.hpp>

namespace cflrun::run::detail {

std::vector<double> QueryExchange::answer_locally(const algo::ClientQuery& query, int round) {
  if (std::none_of(query.clients.begin(), query.clients.end(),
                   [&](int c) { return run_.clients->hosted().hosts(c); })) {
    return {};
  }
  switch (query.kind) {
    case algo::QueryKind::kLossVectors:
      return run_.clients->loss_vectors(*run_.models, query.clients);
    case algo::QueryKind::kClientStatistics: {
      if (!run_.statistic) {
        throw ConfigError(run_.options.algorithm +
                          " asked its clients for a statistic it has no client side for");
      }
      RoundServices services(*run_.clients, run_.models.get(), run_.client_initial_model,
                             run_.local_update_settings());
      const torch::Tensor no_models;  // at set-up, before the models exist
      return run_.clients->client_statistics(*run_.statistic, services,
                                             run_.models ? run_.models->states() : no_models,
                                             query.clients, round, run_.options.seed);
    }
  }
  throw ConfigError("unknown client query " + std::to_string(static_cast<int>(query.kind)));
}

std::vector<algo::QueryAnswer> QueryExchange::answer_queries(
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

std::vector<algo::QueryAnswer> QueryExchange::gather_answers(
    const std::vector<algo::ClientQuery>& queries, const std::vector<std::vector<double>>& local) {
  std::vector<std::int64_t> lengths;
  for (const auto& query : queries) {
    lengths.push_back(answer_length(query.kind, run_.num_models, run_.statistic.get(),
                                    run_.models ? run_.models->state_size() : 0));
  }
  return run::gather_answers(run_.comm, queries, local, lengths);
}

PlanShape RunState::plan_shape() const {
  return {num_clients, num_models, models ? models->state_size() : 0};
}

}  // namespace cflrun::run::detail
