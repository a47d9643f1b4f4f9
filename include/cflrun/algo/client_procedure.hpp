#pragma once
/// @file
/// The client side of an algorithm whose clients do more than the standard local update (the
/// personalised-FL methods): their own training step (Per-FedAvg's meta-update, FedProto's and
/// FedPAC's prototype regulariser), what they report after training (prototypes) and how they
/// are scored (one fine-tuning step, prototype inference, FedALA's adaptive aggregation before
/// testing). run::ClientGroup calls it for every hosted client; it lives on every rank and holds
/// no per-client state of its own (that is LocalClient::memory, kept by the run and checkpointed
/// with it). What clients compute for the server before it plans is a ClientStatistic
/// (client_statistic.hpp).

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/local/scoring.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::algo {

/// One hosted client as its algorithm's client side sees it in a round.
struct LocalClient {
  int id = 0;     ///< global client id.
  int round = 0;  ///< 0-based round.
  std::uint64_t seed =
      1;  ///< run seed; the client's streams are core::make_*(seed, purpose, id, round).
  model::Objective objective = model::Objective::kClassification;  ///< the run's loss.
  torch::Tensor train_inputs;   ///< [n, ...sample shape] float32 on the compute device.
  torch::Tensor train_targets;  ///< [n] int64 labels (or float32 values).
  torch::Tensor test_inputs;    ///< [t, ...sample shape].
  torch::Tensor test_targets;   ///< [t].
  torch::Tensor* local_model =
      nullptr;  ///< [P] float32 CPU persistent local model (keeps_local_models), else null.
  const torch::Tensor* server_models =
      nullptr;  ///< [K, P] float32 CPU, the server models as the client received them.
  AlgorithmState* memory =
      nullptr;  ///< the client's own tensors kept across rounds (prototypes, ALA weights...).
};

/// What one client measured on its test data (accuracy fraction, mean loss).
using ClientScore = local::Score;

/// The client side of an algorithm (see the file comment). Every method is called with the
/// run's working model, which the procedure may change freely.
class ClientProcedure {
 public:
  virtual ~ClientProcedure() = default;

  /// Checked at set-up, before any result file is written, for every hosted client: whether a
  /// client with `train_samples` training samples can run this procedure under `settings`.
  /// @throws ConfigError naming the option to change. Default: every client can.
  virtual void check_client(int /*client*/, std::int64_t /*train_samples*/,
                            const local::LocalUpdateSettings& /*settings*/) const {}

  /// Whether train(), report() and evaluate() of different clients may run at once,
  /// each on its own thread with its own model and one intra-op thread (run::ClientGroup's
  /// parallel clients: the results then equal --threads 1's): true only where they read nothing
  /// one client writes for another (they may read the payload and the client's own view) and draw
  /// random numbers only from the client's own streams. Default: false, one client after another.
  virtual bool runs_concurrently() const { return false; }

  /// The local update of `client` (instead of the standard one): `model` holds its start state
  /// (RoundPlan::start), is trained in place and then aggregated and kept as the run does for any
  /// algorithm.
  /// @param settings  the run's local solver (--optimizer, --lr, --batch-size, --local-epochs).
  /// @param payload   the round's server payload (RoundPlan::payload).
  /// @return mean training loss of the last epoch (the objective's units).
  /// Default: the standard local update (local::local_update, mini-batches from the client's
  /// (seed, kLocalUpdate, id, round) stream).
  virtual double train(LocalClient& client, model::Network& model,
                       const local::LocalUpdateSettings& settings, const AlgorithmState& payload);

  /// Floats per client in report() (0 = no report).
  virtual std::int64_t report_length() const { return 0; }
  /// Called after train() with the trained model: what the client sends the server
  /// (Algorithm::receive_reports), [report_length()].
  virtual std::vector<double> report(LocalClient& client, model::Network& model);

  /// The client's test score after the round's aggregation: `model` holds its assigned server
  /// model (or its local model, Algorithm::evaluates_local_models). May change the client's local
  /// model and memory (FedALA prepares the next round's model here). Default: local::score.
  virtual ClientScore evaluate(LocalClient& client, model::Network& model,
                               const AlgorithmState& payload);
};

}  // namespace cflrun::algo
