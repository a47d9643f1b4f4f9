// What moves between the server (rank 0) and the ranks hosting clients in a round: the server's
// queries, the clients' answers, the round plan and the aggregation weights.
#include "experiment_state.hpp"
#include <cflrun/run/round_services.hpp>

namespace cflrun::run::detail {
namespace {

/// Broadcasts a vector whose length only rank 0 knows.
template <typename T>
void share_vector(const comm::Communicator& comm, std::vector<T>& values) {
  int count = static_cast<int>(values.size());
  comm.broadcast(&count, 1);
  values.resize(static_cast<std::size_t>(count));
  comm.broadcast(values.data(), count);
}

/// Broadcasts a tensor of `shape` from rank 0, if rank 0 has one (`defined`); others allocate it.
void share_tensor(const comm::Communicator& comm, torch::Tensor& tensor, const std::vector<std::int64_t>& shape,
                  torch::ScalarType type) {
  int defined = tensor.defined() ? 1 : 0;
  comm.broadcast(&defined, 1);
  if (defined == 0) {
    tensor = torch::Tensor();
    return;
  }
  tensor = comm.is_root() ? tensor.to(type).contiguous() : torch::empty(shape, type);
  if (type == torch::kFloat64) {
    comm.broadcast(tensor.data_ptr<double>(), tensor.numel());
  } else {
    comm.broadcast(tensor.data_ptr<float>(), tensor.numel());
  }
}

/// Broadcasts rank 0's named tensors to every rank, in the one wire format of named tensors
/// (pack_state: names, dtypes, shapes and values as doubles; int64 exact up to 2^53).
void share_named_tensors(const comm::Communicator& comm, algo::AlgorithmState& tensors) {
  auto packed = comm.is_root() ? pack_state(tensors) : std::vector<double>{};
  share_vector(comm, packed);
  if (!comm.is_root()) {
    tensors = unpack_state(packed);
  }
}

}  // namespace

ClientRows gather_client_rows(const comm::Communicator& comm, const std::vector<int>& clients,
                              const std::vector<double>& rows, std::int64_t width) {
  std::vector<double> local;  // per client: its id, then its row
  for (std::size_t i = 0; i < clients.size(); ++i) {
    local.push_back(clients[i]);
    local.insert(local.end(), rows.begin() + static_cast<std::ptrdiff_t>(i * width),
                 rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
  }
  const auto gathered = comm.gather(local);
  ClientRows table;
  if (comm.is_root()) {
    const auto all = torch::tensor(gathered, torch::kFloat64).view({-1, width + 1});
    const auto ids = all.select(1, 0).to(torch::kInt64).contiguous();
    table.clients.assign(ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + ids.numel());
    table.rows = all.narrow(1, 1, width);
  }
  return table;
}

std::vector<algo::ClientQuery> Experiment::share_queries(std::vector<algo::ClientQuery> queries) const {
  int count = static_cast<int>(queries.size());
  comm_.broadcast(&count, 1);
  queries.resize(static_cast<std::size_t>(count));
  for (auto& query : queries) {
    int kind = static_cast<int>(query.kind);
    comm_.broadcast(&kind, 1);
    query.kind = static_cast<algo::QueryKind>(kind);
    share_vector(comm_, query.clients);
  }
  return queries;
}

std::vector<double> Experiment::answer_locally(const algo::ClientQuery& query, int round) {
  if (std::none_of(query.clients.begin(), query.clients.end(), [&](int c) { return clients_->hosts(c); })) {
    return {};
  }
  switch (query.kind) {
    case algo::QueryKind::kLossVectors:
      return clients_->loss_vectors(*models_, query.clients);
    case algo::QueryKind::kClientStatistics: {
      if (!statistic_) {
        throw ConfigError(options_.algorithm + " asked its clients for a statistic it has no client side for");
      }
      RoundServices services(*clients_, models_.get(), client_initial_model_, local_update_settings());
      const torch::Tensor no_models;  // at set-up, before the models exist
      return clients_->client_statistics(*statistic_, services, models_ ? models_->states() : no_models,
                                         query.clients, round, options_.seed);
    }
  }
  throw ConfigError("unknown client query " + std::to_string(static_cast<int>(query.kind)));
}

std::vector<algo::QueryAnswer> Experiment::answer_queries(const std::vector<algo::ClientQuery>& queries, int round) {
  std::vector<std::vector<double>> local;
  for (const auto& query : queries) {
    local.push_back(answer_locally(query, round));
  }
  return gather_answers(queries, local);
}

std::int64_t Experiment::answer_length(algo::QueryKind kind) const {
  if (kind == algo::QueryKind::kLossVectors) {
    return num_models_;
  }
  return statistic_ ? statistic_->length(num_models_, models_ ? models_->state_size() : 0) : 0;
}

std::vector<algo::QueryAnswer> Experiment::gather_answers(const std::vector<algo::ClientQuery>& queries,
                                                          const std::vector<std::vector<double>>& local) {
  std::vector<algo::QueryAnswer> answers;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto gathered = comm_.gather(local.at(q));
    if (comm_.is_root()) {
      const auto n = static_cast<std::int64_t>(queries[q].clients.size());
      const auto length = answer_length(queries[q].kind);
      if (static_cast<std::int64_t>(gathered.size()) != n * length) {
        throw ShapeError("the clients' answers hold " + std::to_string(gathered.size()) + " floats, not " +
                         std::to_string(n) + " clients x " + std::to_string(length));
      }
      answers.push_back({queries[q], torch::tensor(gathered, torch::kFloat64).view({n, length})});
    }
  }
  return answers;
}

void Experiment::share_plan(algo::RoundPlan& plan) const {
  const auto m = static_cast<std::int64_t>(true_clusters_.size());
  const auto k = static_cast<std::int64_t>(num_models_);
  plan.assignment.resize(static_cast<std::size_t>(m));
  plan.start.resize(static_cast<std::size_t>(m));
  comm_.broadcast(plan.assignment.data(), m);
  comm_.broadcast(plan.start.data(), m);
  share_tensor(comm_, plan.weights, {k, m}, torch::kFloat64);
  share_tensor(comm_, plan.proximal_weights, {m, k}, torch::kFloat64);
  share_tensor(comm_, plan.models, {k, models_->state_size()}, torch::kFloat32);
  share_tensor(comm_, plan.head_weights, {k, m}, torch::kFloat64);
  share_named_tensors(comm_, plan.payload);
}

void Experiment::share_assignment(std::vector<int>& assignment) const { share_vector(comm_, assignment); }

void Experiment::share_payload(algo::AlgorithmState& payload) const { share_named_tensors(comm_, payload); }

void Experiment::share_weights(torch::Tensor& weights) const {
  const auto m = static_cast<std::int64_t>(true_clusters_.size());
  share_tensor(comm_, weights, {num_models_, m}, torch::kFloat64);
}

}  // namespace cflrun::run::detail
