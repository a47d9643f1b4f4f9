#pragma once
/// @file
/// The client side of an algorithm's own query (QueryKind::kClientStatistics): what each client
/// computes for the server before it plans a round, or once at set-up (FedSoft's importance
/// weights, FeSEM's model distances, FlexCFL's warm-up updates, PACFL's data signatures, FedPAC's
/// feature statistics). The algorithm writes the computation; the run offers the services it is
/// built from (ClientServices: batched per-sample losses over the rank's stacked samples, the
/// standard local update, one working model per thread), so that no file of cflrun::run knows
/// an algorithm.

#include <cstdint>
#include <functional>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::algo {

/// What the run offers a client statistic on the rank that hosts the clients (run::ClientGroup
/// implements it for the current round's models).
class ClientServices {
 public:
  virtual ~ClientServices() = default;

  /// The loss of every training sample of `clients` under every server model, in eval mode
  /// without gradients, computed over the clients' stacked samples (one batched forward pass per
  /// model, through model::InferenceForward) rather than client by client.
  /// @param clients  hosted clients (LocalClient::id), increasing ids.
  /// @return [n, K] float64 on the CPU: the rows of clients[0]'s samples in order, then
  /// clients[1]'s...
  virtual torch::Tensor per_sample_losses(const std::vector<LocalClient>& clients) = 0;

  /// The standard local update of `client` on `model` (trained in place): local::local_update on
  /// the client's training samples, mini-batches from its (seed, `purpose`, id, round) stream.
  /// @return the mean training loss of the last epoch (the objective's units).
  virtual double local_update(const LocalClient& client, model::Network& model,
                              const local::LocalUpdateSettings& settings,
                              core::Purpose purpose) = 0;

  /// The standard local update of every client of `clients` from the flat state `start`, each as
  /// local_update with `purpose` would train it (its own stream, its dropout masks), client-batched
  /// where the run's clients are (--client-batch), else as the run trains them.
  /// @param start  [P] float32 flat state every client starts from.
  /// @return [p, P] float32 CPU trained flat states, rows in the order of `clients`.
  virtual torch::Tensor local_updates(std::vector<LocalClient>& clients, const torch::Tensor& start,
                                      const local::LocalUpdateSettings& settings,
                                      core::Purpose purpose) = 0;

  /// The body's features (model::Network::features) of every training sample of `clients` under
  /// the flat state `state`, in eval mode without gradients, over the clients' stacked samples
  /// (local::eval_chunk rows per forward pass) rather than client by client.
  /// @param state  [P] float32 flat state.
  /// @return [n, d] float64 on the CPU: clients[0]'s rows in order, then clients[1]'s...
  /// @throws ConfigError if the model has no body/head split.
  virtual torch::Tensor training_features(const std::vector<LocalClient>& clients,
                                          const torch::Tensor& state) = 0;

  /// Calls work(n, model) for n = 0 .. count - 1, each with a working model of the run's
  /// architecture that the work loads as it needs (it holds an arbitrary state on entry). With
  /// `concurrent`, and where the run trains clients on several threads (--parallel-clients), the
  /// calls run on those threads, each thread with its own model and one intra-op thread: only for
  /// work that reads nothing another client's work writes and draws only from its client's streams.
  /// @throws what `work` throws (the first failure).
  virtual void for_each_client(std::size_t count, bool concurrent,
                               const std::function<void(std::size_t, model::Network&)>& work) = 0;

  /// The run's local solver (--optimizer, --lr, --batch-size, --local-epochs, objective).
  virtual const local::LocalUpdateSettings& local_solver() const = 0;

  /// [P] float32 CPU, the client initial model (Traits::uses_client_initial_model).
  /// @throws ConfigError if the run built none.
  virtual const torch::Tensor& client_initial_model() const = 0;
};

/// What a client needs from the server to compute its statistic: counted in the round's logical
/// traffic (RoundFacts).
enum class StatisticInput {
  kAllModels,           ///< every server model (FedSoft, FeSEM).
  kClientInitialModel,  ///< the client initial model (FlexCFL's warm-up update).
  kNothingNew,          ///< nothing beyond what the client holds or trains anyway (FedPAC, PACFL).
};

/// The client side of an algorithm's own query (see the file comment). It lives on every rank and
/// keeps no state of its own across calls.
class ClientStatistic {
 public:
  virtual ~ClientStatistic() = default;

  /// L, floats per client of compute().
  /// @param num_models  K, the server models now.
  /// @param state_size  P, floats of one model's flat state.
  virtual std::int64_t length(int num_models, std::int64_t state_size) const = 0;

  /// What a client must receive to compute it (for the traffic count).
  virtual StatisticInput input() const = 0;

  /// The statistic of each client of `clients` (hosted here, increasing ids; their
  /// LocalClient::server_models are the current server models).
  /// @return [p, L] float64, row-major, p = clients.size().
  virtual std::vector<double> compute(std::vector<LocalClient>& clients,
                                      ClientServices& services) = 0;
};

/// The client side of an algorithm (Algorithm::client_side): either part may be null.
struct ClientSide {
  /// The clients' own training, reports and scoring (the personalised-FL methods); null: the
  /// standard local update and scoring.
  std::shared_ptr<ClientProcedure> procedure;
  /// The answer to the algorithm's QueryKind::kClientStatistics; null: the algorithm asks none.
  std::shared_ptr<ClientStatistic> statistic;
};

}  // namespace cflrun::algo
