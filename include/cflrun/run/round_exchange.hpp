#pragma once
/// @file
/// What moves between the server (rank 0) and the ranks hosting clients, in one wire format: the
/// server's queries and plans broadcast, the clients' answers and "client id + row" tables
/// gathered, named tensors (payloads) as pack_state's doubles. Every function here is collective:
/// all ranks of `comm` call it in the same order.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/comm/communicator.hpp>

namespace cflrun::run {

/// The sizes a round plan's tensors have (a rank other than 0 allocates them from these).
struct PlanShape {
  std::int64_t clients = 0;     ///< M.
  std::int64_t models = 0;      ///< K.
  std::int64_t state_size = 0;  ///< P.
};

/// Rank 0's queries on every rank (kind and clients; the others pass an empty vector).
std::vector<algo::ClientQuery> share_queries(const comm::Communicator& comm,
                                             std::vector<algo::ClientQuery> queries);

/// Rank 0's plan on every rank: assignment and start [M], weights [K, M], proximal weights [M, K],
/// models [K, P] float32, head weights [K, M] (each only if rank 0's is defined), payload.
void share_plan(const comm::Communicator& comm, algo::RoundPlan& plan, const PlanShape& shape);

/// Rank 0's aggregation (aggregate()'s weights [K, M] and assignment [M] or none) on every rank.
void share_aggregation(const comm::Communicator& comm, algo::Aggregation& aggregation,
                       const PlanShape& shape);

/// Rank 0's named tensors on every rank (pack_state / unpack_state: names, dtypes, shapes and
/// values as doubles; int64 exact up to 2^53).
void share_named_tensors(const comm::Communicator& comm, algo::AlgorithmState& tensors);

/// Rows of some clients gathered from every rank to rank 0 (gather_client_rows).
struct ClientRows {
  std::vector<int> clients;  ///< rank 0: the clients, in rank order (increasing ids).
  torch::Tensor rows;        ///< rank 0: [n, width] float64, row i of clients[i].
};

/// The one wire format of "client id + row" tables: every rank sends its clients' rows (`rows`:
/// [clients.size() * width] float64, client-major); rank 0 gets them all.
ClientRows gather_client_rows(const comm::Communicator& comm, const std::vector<int>& clients,
                              const std::vector<double>& rows, std::int64_t width);

/// Every rank's answers to `queries` (`local[q]`: the rows of its hosted clients among
/// queries[q].clients, client-major) gathered into one QueryAnswer per query on rank 0.
/// @param lengths  [queries.size()] floats per client of each answer.
/// @throws ShapeError on rank 0 if an answer does not hold clients x length floats.
std::vector<algo::QueryAnswer> gather_answers(const comm::Communicator& comm,
                                              const std::vector<algo::ClientQuery>& queries,
                                              const std::vector<std::vector<double>>& local,
                                              const std::vector<std::int64_t>& lengths);

/// Every rank's own state (e.g. its hosted clients' local models) gathered to rank 0 for a
/// checkpoint, in the wire format of named tensors.
/// @return rank 0: [ranks] the states in rank order; other ranks: empty.
std::vector<algo::AlgorithmState> gather_rank_states(const comm::Communicator& comm,
                                                     const algo::AlgorithmState& own);

/// The inverse on a resume: rank 0 holds every rank's state (`all`, [ranks], in rank order;
/// ignored elsewhere); every rank gets its own.
algo::AlgorithmState scatter_rank_states(const comm::Communicator& comm,
                                         const std::vector<algo::AlgorithmState>& all);

}  // namespace cflrun::run
