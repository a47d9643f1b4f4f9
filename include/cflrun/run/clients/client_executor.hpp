#pragma once
/// @file
/// How a rank runs its clients' work: one client after another, on several threads at once
/// (--parallel-clients), or client-batched (--client-batch: many clients as one
/// model::ClientBatchedNetwork). One interface, chosen once at set-up by make_client_executor from
/// what the run asks and what the algorithm's client procedure and the model allow; every
/// implementation computes what one client after another computes (threads: bit for bit;
/// client-batched: up to float rounding).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/run/clients/hosted_clients.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// What a round asks of the clients it trains, the same for each of them.
struct TrainingRound {
  const algo::RoundPlan& plan;  ///< start, proximal weights and payload of the round.
  ModelSet& models;             ///< the server models the updates start from.
  int round = 0;                ///< 0-based round.
  std::uint64_t seed = 1;       ///< the run's seed (the clients' streams).
  /// The local solver; with the plan's proximal weights, proximal.centers = the server models.
  const local::LocalUpdateSettings& settings;
};

/// What a round's scoring needs beyond each client's model.
struct ScoringRound {
  ModelSet& models;                     ///< the server models after aggregation.
  const algo::AlgorithmState& payload;  ///< what the clients are scored with (prototypes...).
  int round = 0;
  std::uint64_t seed = 1;
};

/// A hosted client and the model its work starts from: a row of the ModelSet, or
/// algo::kLocalModel (its local model).
struct ClientStart {
  int i = 0;      ///< hosted index.
  int start = 0;  ///< model index or algo::kLocalModel.
};

/// One client's local update, as the run aggregates it.
struct TrainedClient {
  /// [P] float32 CPU: the trained flat state, or under gradient averaging its gradient.
  torch::Tensor result;
  double loss = 0.0;           ///< the procedure's train() loss.
  std::vector<double> report;  ///< its report() (empty when report_length() is 0).
};

/// How the run would like its clients run; make_client_executor picks what is allowed.
struct ExecutionSettings {
  /// Training threads at once (--parallel-clients: the rank's threads; 1 = none).
  int threads = 1;
  /// Clients at once as one client-batched model (--client-batch; 1 = one at a time).
  int client_batch = 1;
  /// > 0: fewer clients where their stacked states (parameters, gradients and two optimizer
  /// moments: 16 bytes per float of the flat state) would take more than this many bytes.
  std::int64_t client_batch_bytes = 0;
};

/// Runs the hosted clients' work (see the file comment). Holds the hosted clients and their
/// procedure by reference.
class ClientExecutor {
 public:
  /// work(n, model): client n of a call, on a model of the run's architecture holding an
  /// arbitrary state.
  using Work = std::function<void(std::size_t, model::Network&)>;

  virtual ~ClientExecutor() = default;

  /// How the clients run, for the run's set-up line: "one at a time", "on 2 threads",
  /// "client-batched (up to 25 at a time)".
  virtual std::string describe() const = 0;

  /// The local updates of `starts` (increasing hosted indices): each client's start state loaded,
  /// trained by its procedure from its own streams, reported and flattened.
  /// @return one TrainedClient per start, in the order of `starts`.
  /// @throws what the procedure throws.
  virtual std::vector<TrainedClient> train(const TrainingRound& round,
                                           const std::vector<ClientStart>& starts) = 0;

  /// The procedure's evaluate() of `scored`, each on its model (a server model or its local model).
  /// @return one score per client, in the order of `scored`.
  virtual std::vector<algo::ClientScore> evaluate(const ScoringRound& round,
                                                  const std::vector<ClientStart>& scored) = 0;

  /// The standard local update of each of `clients` from the flat state `start` with `purpose`'s
  /// streams (algo::ClientServices::local_updates).
  /// @return [p, P] float32 CPU trained flat states, in the order of `clients`.
  virtual torch::Tensor standard_updates(ModelSet& models, std::vector<algo::LocalClient>& clients,
                                         const torch::Tensor& start,
                                         const local::LocalUpdateSettings& settings,
                                         core::Purpose purpose) = 0;

  /// Calls work(n, model) for n < count, on the training threads where this executor has them
  /// and `concurrent` allows (algo::ClientServices::for_each_client), else one after another on
  /// the working model.
  /// @throws what `work` throws.
  virtual void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                               const Work& work) = 0;
};

/// The executor the run asked for where the procedure and model allow it: client-batched when
/// execution.client_batch > 1 and the model and the procedure have client-batched forms
/// (model::ClientBatchedNetwork::supports, algo::ClientProcedure::not_batched); else on
/// execution.threads threads when there are several, on the CPU, the procedure
/// runs_concurrently and no optimizers are kept; else one client after another.
/// @param reference  a model of the run's architecture (ModelSet::working_model).
/// @param why        out: why a faster way asked for was not taken ("" when it was).
std::unique_ptr<ClientExecutor> make_client_executor(HostedClients& clients,
                                                     algo::ClientProcedure& procedure,
                                                     const ExecutionSettings& execution,
                                                     const model::Network& reference,
                                                     std::string& why);

}  // namespace cflrun::run
