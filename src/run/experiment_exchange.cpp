// What moves between the server (rank 0) and the ranks hosting clients in a round: the server's
// queries, the clients' answers, the round plan and the aggregation weights.
#include "experiment_state.hpp"

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

/// Broadcasts rank 0's named tensors (any dtype that the Communicator moves: float32, float64,
/// int64 as double, bool as int) to every rank.
void share_named_tensors(const comm::Communicator& comm, algo::AlgorithmState& tensors) {
  std::vector<std::string> names;
  for (const auto& entry : tensors) {
    names.push_back(entry.first);
  }
  int count = static_cast<int>(names.size());
  comm.broadcast(&count, 1);
  names.resize(static_cast<std::size_t>(count));
  for (auto& name : names) {
    std::vector<int> text(name.begin(), name.end());
    share_vector(comm, text);
    name.assign(text.begin(), text.end());
    auto& tensor = tensors[name];
    std::vector<int> header;  // dtype code, then the shape
    if (comm.is_root()) {
      header.push_back(static_cast<int>(tensor.scalar_type()));
      header.insert(header.end(), tensor.sizes().begin(), tensor.sizes().end());
    }
    share_vector(comm, header);
    const auto type = static_cast<torch::ScalarType>(header.at(0));
    auto values = comm.is_root() ? tensor.to(torch::kCPU).to(torch::kFloat64).contiguous()
                                 : torch::empty(std::vector<std::int64_t>(header.begin() + 1, header.end()), torch::kFloat64);
    comm.broadcast(values.data_ptr<double>(), values.numel());
    tensor = values.to(type);
  }
}

/// Floats of one client's answer to `kind`.
std::int64_t answer_length(algo::QueryKind kind, std::int64_t num_models, std::int64_t state_size,
                           const algo::ClientProcedure* procedure) {
  switch (kind) {
    case algo::QueryKind::kWarmUpUpdate:
      return state_size;
    case algo::QueryKind::kClientStatistics:
      return procedure != nullptr ? procedure->statistics_length() : 0;
    default:
      return num_models;
  }
}

}  // namespace

std::vector<algo::ClientQuery> Experiment::share_queries(std::vector<algo::ClientQuery> queries) const {
  int count = static_cast<int>(queries.size());
  comm_.broadcast(&count, 1);
  queries.resize(static_cast<std::size_t>(count));
  for (auto& query : queries) {
    int header[2] = {static_cast<int>(query.kind), query.steps};
    comm_.broadcast(header, 2);
    query.kind = static_cast<algo::QueryKind>(header[0]);
    query.steps = header[1];
    comm_.broadcast(&query.smoother, 1);
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
    case algo::QueryKind::kImportanceWeights:
      return clients_->importance_weights(*models_, query.smoother, query.clients);
    case algo::QueryKind::kModelDistances:
      return clients_->model_distances(*models_, query.clients);
    case algo::QueryKind::kClientStatistics:
      return clients_->client_statistics(*models_, query.clients, round, options_.seed);
    case algo::QueryKind::kWarmUpUpdate:
      return clients_->warm_up_updates(models_->working_model(), client_initial_model_, query.steps, round,
                                       options_.seed, local_update_settings(), query.clients);
  }
  throw ConfigError("unknown client query " + std::to_string(static_cast<int>(query.kind)));
}

std::vector<algo::QueryAnswer> Experiment::answer_queries(const std::vector<algo::ClientQuery>& queries, int round) {
  std::vector<algo::QueryAnswer> answers;
  for (const auto& query : queries) {
    const auto gathered = comm_.gather(answer_locally(query, round));
    if (comm_.is_root()) {
      const auto n = static_cast<std::int64_t>(query.clients.size());
      const auto length = answer_length(query.kind, num_models_, models_->state_size(), procedure_.get());
      answers.push_back({query, torch::tensor(gathered, torch::kFloat64).view({n, length})});
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
