#pragma once
/// @file
/// The clients one rank hosts as the round sees them: they answer the server's queries, run the
/// local updates a round plan asks for and are scored on their test data. What they keep is
/// HostedClients; what each does, the algorithm's algo::ClientProcedure (algo::StandardClient
/// unless the algorithm brings its own); how the rank runs them, a ClientExecutor chosen once at
/// set-up. The same code serves every algorithm (algo/algorithm.hpp describes the round).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/model/objective.hpp>
#include <cflrun/run/clients/client_executor.hpp>
#include <cflrun/run/clients/hosted_clients.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// What each hosted client measured on a model after aggregation.
struct ClientEvaluation {
  std::vector<double>
      accuracy;  ///< [m] fraction of test samples classified correctly (NaN without labels).
  std::vector<double>
      test_loss;  ///< [m] mean per-sample loss on the test samples (model::per_sample_loss).
};

/// Receives one trained client's result: its global id and its trained flat state (or, under
/// gradient averaging, its gradient), [P] float64.
using ReceiveTrained = std::function<void(int client, const torch::Tensor& result)>;

/// Clients [first, first + m) of a run, hosted on this rank (see the file comment).
class ClientGroup {
 public:
  /// Materialises the clients' samples on `device`; until set_up, they run the standard local
  /// update one at a time.
  /// @param first, end  client ids [first, end) of `data`; may be empty.
  /// @param objective   the loss of queries, local updates and evaluation.
  ClientGroup(const data::ClientData& data, int first, int end, model::Objective objective,
              torch::Device device);

  /// The hosted clients: ids, samples, local models, kept optimizers, checkpointed state.
  HostedClients& hosted() { return clients_; }
  const HostedClients& hosted() const { return clients_; }
  /// Number m of hosted clients.
  int size() const { return clients_.size(); }

  /// Installs the algorithm's client procedure (each client's memory starts empty) and chooses
  /// how the clients run (make_client_executor), once, after the clients' local models and kept
  /// optimizers are set up.
  /// @param reference  a model of the run's architecture (ModelSet::working_model).
  void set_up(std::shared_ptr<algo::ClientProcedure> procedure, const ExecutionSettings& execution,
              const model::Network& reference);
  /// How the clients run ("one at a time", ...), and why a faster way asked for was not taken.
  std::string execution() const;

  // --- Queries (algo::QueryKind), each for the hosted clients among `clients` (increasing ids) ---

  /// Loss vectors (CLoVE Alg. 1 lines 5-7): entry [i, j] is the mean per-sample loss of the i-th
  /// hosted client's whole training set under model j, in eval mode without gradients
  /// (clove-official-setup.md Sec. 11), one batched forward pass per model over the stacked
  /// samples (model::InferenceForward: a frozen TorchScript module where the architecture has one).
  /// @return [p, K] float64, row-major, p = hosted clients of `clients` in increasing id order.
  std::vector<double> loss_vectors(ModelSet& models, const std::vector<int>& clients);
  /// The loss of every training sample of the hosted clients among `clients` under every model,
  /// as loss_vectors computes them: algo::ClientServices::per_sample_losses.
  /// @return [n, K] float64 on the CPU, client by client in increasing id order.
  torch::Tensor per_sample_losses(ModelSet& models, const std::vector<int>& clients);
  /// The algorithm's own statistic (algo::ClientStatistic::compute) of the hosted clients among
  /// `clients`, each seen as an algo::LocalClient of round `round`.
  /// @param server_states  [K, P] float32, the current server models (undefined at set-up).
  /// @return [p, L] float64, row-major.
  std::vector<double> client_statistics(algo::ClientStatistic& statistic,
                                        algo::ClientServices& services,
                                        const torch::Tensor& server_states,
                                        const std::vector<int>& clients, int round,
                                        std::uint64_t seed);
  /// The standard local update of hosted client `client` on `model` (trained in place), from its
  /// (seed, `purpose`, id, round) stream: algo::ClientServices::local_update.
  /// @return the mean training loss of the last epoch.
  double local_update(const algo::LocalClient& client, model::Network& model,
                      const local::LocalUpdateSettings& settings, core::Purpose purpose);
  /// The standard local updates of `clients` from `start`, through the executor:
  /// algo::ClientServices::local_updates. @return [p, P] float32 CPU.
  torch::Tensor local_updates_from(ModelSet& models, std::vector<algo::LocalClient>& clients,
                                   const torch::Tensor& start,
                                   const local::LocalUpdateSettings& settings,
                                   core::Purpose purpose);
  /// The body's features of the training samples of the hosted clients among `clients` under
  /// `state`, in eval mode, over their stacked samples: algo::ClientServices::training_features.
  /// @return [n, d] float64 CPU, client by client in increasing id order.
  torch::Tensor training_features(ModelSet& models, const std::vector<int>& clients,
                                  const torch::Tensor& state);
  /// Each hosted client's accuracy on its own training samples under the server model it is
  /// assigned (--train-accuracy; the CLoVE notebook's FedAvg accuracy, clove-official-setup.md
  /// Sec. 12), scored as evaluate() scores the test samples (detail::scores_by_assignment: each
  /// model's stacked samples in chunks on the executor's threads). A classification objective
  /// only (the set-up refuses the option otherwise).
  /// @param assignment  [M] every client's model in [0, K), or algo::kNotParticipating.
  /// @return [m] fraction of training samples classified correctly, NaN for a hosted client
  ///         without a model this round.
  std::vector<double> training_accuracies(ModelSet& models, const std::vector<int>& assignment);
  /// ClientExecutor::for_each_client: algo::ClientServices::for_each_client.
  void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                       const ClientExecutor::Work& work);

  // --- The round ---

  /// Runs the local update of every hosted client with plan.start[client] != kNoUpdate (CLoVE
  /// Alg. 1 line 11) through the procedure and executor, from that model or from its local model
  /// (kLocalModel), with the proximal term of plan.proximal_weights when defined (FedSoft Eq. 4),
  /// and passes each result to `receive` in increasing id order; every trained state becomes the
  /// client's local model where the clients keep them. Reports are kept for take_reports.
  /// @param settings    the local solver; settings.proximal.mu is the proximal weight.
  /// @param train_loss  out: [m] each hosted client's train() loss (NaN if it did not train).
  /// @throws ConfigError if the plan starts from local models the clients do not keep, or
  ///         clients keep optimizers of another solver than settings.solver.
  void local_updates(const algo::RoundPlan& plan, ModelSet& models, int round, std::uint64_t seed,
                     const local::LocalUpdateSettings& settings, const ReceiveTrained& receive,
                     std::vector<double>& train_loss);
  /// Reports of the clients trained since the last call: (client id, [L] floats), increasing ids.
  std::vector<std::pair<int, std::vector<double>>> take_reports();
  /// Every hosted client's test accuracy and loss after aggregation: on its assigned model (NaN
  /// for a client assigned -1, not participating) or, with `local_models`, its local model; by
  /// the procedure's evaluate() (in stacked passes when it scores_as_is).
  /// @param assignment  [M] model of every client (global ids), or -1.
  /// @param payload     what the clients are scored with (RoundPlan::payload).
  ClientEvaluation evaluate(const std::vector<int>& assignment, bool local_models, ModelSet& models,
                            const algo::AlgorithmState& payload, int round, std::uint64_t seed);

  /// Seconds spent in LibTorch forward/backward work since the last call; resets the counter.
  double take_compute_seconds();

 private:
  /// Hosted client and start of every client the plan trains, in client order.
  std::vector<ClientStart> training_starts(const algo::RoundPlan& plan) const;
  /// The procedure's evaluate() of the scored clients, through the executor.
  ClientEvaluation evaluate_each(const std::vector<int>& assignment, bool local_models,
                                 ModelSet& models, const algo::AlgorithmState& payload, int round,
                                 std::uint64_t seed);

  HostedClients clients_;
  std::shared_ptr<algo::ClientProcedure> procedure_;
  std::unique_ptr<ClientExecutor> executor_;
  std::string not_taken_;  // why a faster execution asked for was not taken
  std::vector<std::pair<int, std::vector<double>>> reports_;  // since the last take_reports()
  double compute_seconds_ = 0.0;
};

}  // namespace cflrun::run
