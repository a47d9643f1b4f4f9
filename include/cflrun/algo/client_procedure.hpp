#pragma once
/// @file
/// What a client does in a round: its training step (the standard local update, StandardClient, or
/// the personalised-FL methods' own: Per-FedAvg's meta-update, FedProto's and FedPAC's prototype
/// regulariser), what it reports after training (prototypes) and how it is scored (one fine-tuning
/// step, prototype inference, FedALA's adaptive aggregation before testing). Each part has a
/// one-client form, the reference, and may have a client-batched form that computes the same for
/// many clients at once on a model::ClientBatchedNetwork. run::ClientGroup calls it for every
/// hosted client; it lives on every rank and holds no per-client state of its own (that is
/// LocalClient::memory, kept by the run and checkpointed with it). What clients compute for the
/// server before it plans is a ClientStatistic (client_statistic.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/local/batched_update.hpp>
#include <cflrun/local/client_schedule.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/local/scoring.hpp>
#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::algo {

/// One hosted client as its algorithm's client side sees it in a round.
struct LocalClient {
  int id = 0;     ///< global client id.
  int round = 0;  ///< 0-based round.
  /// Mini-batch steps the client may take in this round's local update; 0 = its whole update
  /// (stragglers' partial work, --straggler-work partial; the standard local update honours it).
  std::int64_t max_steps = 0;
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

/// g hosted clients that train or are scored at once (a ClientProcedure's client-batched forms):
/// clients[c] is client c of the model::ClientBatchedNetwork, and its samples are rows
/// [offset, offset + count) of the rank's stacked samples, which the batched forms gather from in
/// one index_select per step instead of one per client.
struct ClientBatch {
  std::vector<LocalClient*> clients;  ///< [g] the clients, in non-increasing order of their
                                      ///< training samples (clients still training are a prefix).
  torch::Tensor train_inputs;   ///< [n, ...sample shape] every hosted client's training inputs.
  torch::Tensor train_targets;  ///< [n] their labels or values.
  std::vector<std::int64_t> train_offsets;  ///< [g] first row of client c's training samples.
  torch::Tensor test_inputs;                ///< [t, ...sample shape] the hosted test inputs.
  torch::Tensor test_targets;               ///< [t].
  std::vector<std::int64_t> test_offsets;   ///< [g] first row of client c's test samples.
  /// [g] each client's [K] importance weights of its proximal term this round (FedSoft Eq. 4,
  /// FedProx; settings.proximal has mu and the centers), or empty: none.
  std::vector<torch::Tensor> proximal_importance;
  /// [g] each client's kept optimizer state (FedSoft's persistent optimizer, the CFL notebook's)
  /// before its update, replaced by the state after; empty: fresh optimizers.
  std::vector<local::OptimizerState> kept_optimizers;

  /// g, the clients at once.
  std::int64_t size() const { return static_cast<std::int64_t>(clients.size()); }
  /// n_c, client c's training samples.
  std::int64_t train_count(std::int64_t c) const;
  /// t_c, client c's test samples.
  std::int64_t test_count(std::int64_t c) const;
};

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
  /// Whether evaluate() is local::score of the model as it is, so that the run may score all
  /// hosted clients in stacked forward passes (one per model) instead. Default: false.
  virtual bool scores_as_is() const { return false; }

  // --- The client-batched form (model::ClientBatchedNetwork, issue 42) ---

  /// "" when train_batched, report_batched and evaluate_batched compute what train, report and
  /// evaluate compute client by client (up to float rounding), so the run may use them
  /// (--client-batch); otherwise why not, and the run trains one client at a time. Default: no
  /// client-batched form.
  virtual std::string not_batched() const { return "it has no client-batched form"; }

  /// train() of every client of `batch` at once: client c of `network` holds its start state, is
  /// trained in place, and is then aggregated and kept as one client's train() would be.
  /// @return [g] each client's train() loss.
  /// @throws ConfigError by default (no client-batched form).
  virtual std::vector<double> train_batched(ClientBatch& batch,
                                            model::ClientBatchedNetwork& network,
                                            const local::LocalUpdateSettings& settings,
                                            const AlgorithmState& payload);
  /// report() of every client of `batch`, `network` holding their trained states.
  /// @return [g] rows of report_length() floats. Default: empty rows (report_length() is 0).
  virtual std::vector<std::vector<double>> report_batched(ClientBatch& batch,
                                                          model::ClientBatchedNetwork& network);
  /// evaluate() of every client of `batch`, `network` holding the models evaluate() would get.
  /// Default: local::batched_scores of those models, the client-batched local::score.
  virtual std::vector<ClientScore> evaluate_batched(ClientBatch& batch,
                                                    model::ClientBatchedNetwork& network,
                                                    const AlgorithmState& payload);
};

/// The standard local update as a client procedure (CLoVE Alg. 1 lines 11-12): local::local_update
/// with mini-batches from the client's (seed, kLocalUpdate, id, round) stream, or under gradient
/// averaging (Option II) local::local_gradient; scored as it is. What clients do unless their
/// algorithm brings its own procedure. Its client-batched form is local::batched_local_update and
/// local::batched_local_gradient.
class StandardClient : public ClientProcedure {
 public:
  bool runs_concurrently() const override { return true; }
  /// @return the mean training loss of the last epoch (the objective's units).
  double train(LocalClient& client, model::Network& model,
               const local::LocalUpdateSettings& settings, const AlgorithmState& payload) override;
  bool scores_as_is() const override { return true; }
  std::string not_batched() const override { return ""; }
  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& payload) override;
};

/// The client-batched form of the standard local update (StandardClient::train_batched, and the
/// train_batched of procedures whose train() is ClientProcedure's): local::batched_local_update,
/// or under gradient averaging local::batched_local_gradient.
/// @return [g] each client's loss, as local::local_update (local_gradient) returns it.
/// @param purpose  the clients' streams (kLocalUpdate in a round; kWarmUp: FlexCFL's pre-training).
std::vector<double> standard_train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                           const local::LocalUpdateSettings& settings,
                                           core::Purpose purpose = core::Purpose::kLocalUpdate);

/// local::batched_local_update's clients for `batch`: each client's rows and its (seed, `purpose`,
/// id, round) mini-batch stream and dropout seed, as its one-client update draws them.
std::vector<local::BatchedClient> batched_clients(const ClientBatch& batch, core::Purpose purpose);

/// Every client's mini-batches of its local update, as local::local_update (and local::run_batches
/// for whole epochs) draws them from its (seed, kLocalUpdate, id, round) stream.
/// @param last_epoch  out: each client's first batch of its last epoch.
local::ClientPasses local_update_passes(const ClientBatch& batch,
                                        const local::LocalUpdateSettings& settings,
                                        std::vector<std::size_t>& last_epoch);

/// The lockstep schedule of the batch's clients' `passes` over their training samples, with the
/// dropout masks of their (seed, `purpose`, id, round) streams.
local::ClientSchedule training_schedule(const ClientBatch& batch,
                                        const model::ClientBatchedNetwork& network,
                                        const local::ClientPasses& passes, core::Purpose purpose);

/// [g] the number of passes of each client.
std::vector<std::size_t> pass_counts(const local::ClientPasses& passes);

/// [g] core::dropout_seed of each client's (seed, `purpose`, id, round) stream: the masks its own
/// model draws (local::draw_dropout_masks).
std::vector<std::uint64_t> dropout_seeds(const ClientBatch& batch, core::Purpose purpose);

/// The stacked parameters of clients [0, g) of `network` stepped by `-step` times their gradients
/// (those without a gradient left alone): each client's plain gradient step w - step grad f(w).
void descend(model::ClientBatchedNetwork& network, std::int64_t g, double step);

}  // namespace cflrun::algo
