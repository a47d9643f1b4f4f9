// The wire format between rank 0 and the ranks hosting clients (round_exchange.hpp).
#include <cflrun/run/round_exchange.hpp>

#include <numeric>
#include <string>

#include <cflrun/core/error.hpp>
#include <cflrun/run/checkpoint.hpp>

namespace cflrun::run {
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
void share_tensor(const comm::Communicator& comm, torch::Tensor& tensor,
                  const std::vector<std::int64_t>& shape, torch::ScalarType type) {
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

}  // namespace

std::vector<algo::ClientQuery> share_queries(const comm::Communicator& comm,
                                             std::vector<algo::ClientQuery> queries) {
  int count = static_cast<int>(queries.size());
  comm.broadcast(&count, 1);
  queries.resize(static_cast<std::size_t>(count));
  for (auto& query : queries) {
    int kind = static_cast<int>(query.kind);
    comm.broadcast(&kind, 1);
    query.kind = static_cast<algo::QueryKind>(kind);
    share_vector(comm, query.clients);
  }
  return queries;
}

void share_plan(const comm::Communicator& comm, algo::RoundPlan& plan, const PlanShape& shape) {
  const auto m = shape.clients;
  const auto k = shape.models;
  plan.assignment.resize(static_cast<std::size_t>(m));
  plan.start.resize(static_cast<std::size_t>(m));
  comm.broadcast(plan.assignment.data(), m);
  comm.broadcast(plan.start.data(), m);
  share_tensor(comm, plan.weights, {k, m}, torch::kFloat64);
  share_tensor(comm, plan.proximal_weights, {m, k}, torch::kFloat64);
  share_tensor(comm, plan.models, {k, shape.state_size}, torch::kFloat32);
  share_tensor(comm, plan.head_weights, {k, m}, torch::kFloat64);
  share_named_tensors(comm, plan.payload);
}

void share_aggregation(const comm::Communicator& comm, algo::Aggregation& aggregation,
                       const PlanShape& shape) {
  share_tensor(comm, aggregation.weights, {shape.models, shape.clients}, torch::kFloat64);
  share_vector(comm, aggregation.assignment);
}

void share_named_tensors(const comm::Communicator& comm, algo::AlgorithmState& tensors) {
  auto packed = comm.is_root() ? pack_state(tensors) : std::vector<double>{};
  share_vector(comm, packed);
  if (!comm.is_root()) {
    tensors = unpack_state(packed);
  }
}

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

std::vector<algo::QueryAnswer> gather_answers(const comm::Communicator& comm,
                                              const std::vector<algo::ClientQuery>& queries,
                                              const std::vector<std::vector<double>>& local,
                                              const std::vector<std::int64_t>& lengths) {
  std::vector<algo::QueryAnswer> answers;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const auto gathered = comm.gather(local.at(q));
    if (comm.is_root()) {
      const auto n = static_cast<std::int64_t>(queries[q].clients.size());
      const auto length = lengths.at(q);
      if (static_cast<std::int64_t>(gathered.size()) != n * length) {
        throw ShapeError("the clients' answers hold " + std::to_string(gathered.size()) +
                         " floats, not " + std::to_string(n) + " clients x " +
                         std::to_string(length));
      }
      answers.push_back({queries[q], torch::tensor(gathered, torch::kFloat64).view({n, length})});
    }
  }
  return answers;
}

std::vector<algo::AlgorithmState> gather_rank_states(const comm::Communicator& comm,
                                                     const algo::AlgorithmState& own) {
  const auto gathered = comm.gather(pack_state(own));
  std::vector<algo::AlgorithmState> states;
  std::size_t at = 0;
  for (int rank = 0; comm.is_root() && rank < comm.size();
       ++rank) {  // each part is self-delimiting
    states.push_back(unpack_state(gathered, at));
  }
  return states;
}

algo::AlgorithmState scatter_rank_states(const comm::Communicator& comm,
                                         const std::vector<algo::AlgorithmState>& all) {
  std::vector<double> packed;  // every rank's part, then one broadcast: each rank takes its own
  std::vector<int> lengths(static_cast<std::size_t>(comm.size()));
  for (std::size_t r = 0; comm.is_root() && r < all.size(); ++r) {
    const auto part = pack_state(all[r]);
    lengths[r] = static_cast<int>(part.size());
    packed.insert(packed.end(), part.begin(), part.end());
  }
  comm.broadcast(lengths.data(), comm.size());
  const auto offset =
      std::accumulate(lengths.begin(), lengths.begin() + comm.rank(), std::int64_t{0});
  const auto total = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  packed.resize(static_cast<std::size_t>(total));
  comm.broadcast(packed.data(), total);
  const auto begin = packed.begin() + offset;
  return unpack_state(
      std::vector<double>(begin, begin + lengths[static_cast<std::size_t>(comm.rank())]));
}

}  // namespace cflrun::run
