#pragma once
/// @file
/// The clients one rank hosts, with their data stacked so that one forward pass serves many
/// clients: they answer the server's queries, run the local updates a round plan asks for, keep
/// their persistent state (local models, optimizers) and score models on their test data. The
/// same code serves every algorithm (algo/algorithm.hpp describes the round).

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/objective.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/run/kept_optimizers.hpp>
#include <cflrun/run/model_set.hpp>
#include <cflrun/run/stacked_samples.hpp>
#include <cflrun/run/training_threads.hpp>

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
using TrainedClient = std::function<void(int client, const torch::Tensor& result)>;

/// Clients [first, first + m) of a run, hosted on this rank. Their training (test) samples are
/// stacked into one [n, ...sample shape] tensor with a per-sample owner index, so computing loss
/// vectors or test metrics costs one batched forward pass per model rather than one per client and
/// model (the loss-vector phase dominates a CLoVE round).
class ClientGroup {
 public:
  /// Materialises the clients' samples on `device`.
  /// @param first, end  client ids [first, end) of `data`; may be empty.
  /// @param objective   the loss of queries, local updates and evaluation.
  ClientGroup(const data::ClientData& data, int first, int end, model::Objective objective,
              torch::Device device);

  /// Global id of the first hosted client.
  int first_client() const { return first_; }
  /// Number m of hosted clients (0 on the server rank when there are workers).
  int size() const { return static_cast<int>(train_.counts().size()); }
  /// Whether global client `client` is hosted here.
  bool hosts(int client) const { return client >= first_ && client < first_ + size(); }
  /// Training samples n_k of every hosted client, [m].
  const std::vector<std::int64_t>& train_counts() const { return train_.counts(); }

  // --- Queries (algo::QueryKind), each for the hosted clients among `clients` (increasing ids) ---

  /// Loss vectors (CLoVE Alg. 1 lines 5-7): entry [i, j] is the mean per-sample loss of the i-th
  /// hosted client's whole training set under model j, in eval mode without gradients
  /// (clove-official-setup.md Sec. 11). Each model runs through model::InferenceForward (a frozen
  /// TorchScript module where the architecture has one).
  /// @return [p, K] float64, row-major, p = hosted clients of `clients` in increasing id order.
  std::vector<double> loss_vectors(ModelSet& models, const std::vector<int>& clients);

  /// The loss of every training sample of the hosted clients among `clients` under every model,
  /// in eval mode without gradients, over their stacked samples (one batched forward pass per
  /// model through model::InferenceForward): algo::ClientServices::per_sample_losses.
  /// @return [n, K] float64 on the CPU, client by client in increasing id order.
  torch::Tensor per_sample_losses(ModelSet& models, const std::vector<int>& clients);

  /// The algorithm's own statistic (algo::ClientStatistic::compute) of the hosted clients among
  /// `clients`, each seen as an algo::LocalClient of round `round`.
  /// @param services       the run's services for this round (run::RoundServices).
  /// @param server_states  [K, P] float32, the current server models (undefined at set-up).
  /// @return [p, L] float64, row-major.
  std::vector<double> client_statistics(algo::ClientStatistic& statistic,
                                        algo::ClientServices& services,
                                        const torch::Tensor& server_states,
                                        const std::vector<int>& clients, int round,
                                        std::uint64_t seed);

  /// The standard local update of hosted client `client` on `model` (trained in place),
  /// mini-batches from its (seed, `purpose`, id, round) stream: algo::ClientServices::local_update.
  /// @return the mean training loss of the last epoch.
  double local_update(const algo::LocalClient& client, model::Network& model,
                      const local::LocalUpdateSettings& settings, core::Purpose purpose);

  /// Calls work(n, model) for n < count with a working model (of `models`' architecture, holding
  /// an arbitrary state); on the training threads (set_training_threads) when `concurrent` and
  /// the clients may train there: algo::ClientServices::for_each_client.
  /// @throws what `work` throws.
  void for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                       const std::function<void(std::size_t, model::Network&)>& work);

  // --- Local updates ---

  /// Runs the local update of every hosted client with plan.start[client] != kNoUpdate (CLoVE
  /// Alg. 1 line 11), from that model or from its local model (kLocalModel), with the proximal
  /// term of plan.proximal_weights when defined (FedSoft Eq. 4), and passes each result to
  /// `receive` in increasing id order. With local models (init_local_models) every trained state
  /// is also kept as the client's local model.
  /// @param settings    the local solver; settings.proximal.mu is the proximal weight.
  /// @param train_loss  out: [m] mean training loss of each hosted client's last local epoch
  ///                    (NaN for a client that did not train).
  /// @throws ConfigError if the plan starts from local models that were not initialised, or
  ///         clients keep optimizers of another solver than settings.solver.
  void local_updates(const algo::RoundPlan& plan, ModelSet& models, int round, std::uint64_t seed,
                     const local::LocalUpdateSettings& settings, const TrainedClient& receive,
                     std::vector<double>& train_loss);

  /// Threads on which local_updates trains clients at once (each client on one thread, with one
  /// LibTorch intra-op thread), where that cannot change what a client computes: plain local
  /// updates, or a ClientProcedure that runs_concurrently (then its statistics and scores too),
  /// without optimizers kept across rounds, on the CPU (each thread's model draws its dropout
  /// masks from the client's own generator, seed_dropout). 1 (the default) trains the clients one
  /// after the other with the rank's intra-op threads.
  void set_training_threads(int threads) { training_threads_ = TrainingThreads(threads); }

  /// Clients whose local updates local_updates runs at once as one model::ClientBatchedNetwork
  /// (local::batched_local_update: stacked parameters, grouped convolutions, batched matrix
  /// products), where that computes what one client at a time would up to float rounding: plain
  /// local updates or gradients (no ClientProcedure, no kept optimizers, no proximal term) of an
  /// architecture with a client-batched form. 1 (the default) turns it off; it takes precedence
  /// over set_training_threads. With `state_bytes` > 0, fewer clients where their stacked states
  /// (parameters, gradients and two optimizer moments: 16 bytes per float of the flat state) would
  /// take more than that (the auto setting on a GPU: 32 of the CIFAR CNN's 4.2 M floats in 2 GiB).
  void set_client_batch(int clients, std::int64_t state_bytes = 0) {
    client_batch_ = clients;
    client_batch_bytes_ = state_bytes;
  }

  /// Gives every hosted client a persistent local model, a copy of `initial` (the client initial
  /// model of FedSoft and FeSEM).
  /// @param initial  [P] float32 flat state.
  void init_local_models(const torch::Tensor& initial);

  /// Each hosted client keeps its own optimizer across its local updates (algo::Traits::
  /// keeps_optimizers: FedSoft's official client, the CFL notebook) instead of a fresh one per
  /// update (KeptOptimizers). Such clients train one at a time (not on threads, not
  /// client-batched).
  /// @param solver          the solver of every local update (--optimizer).
  /// @param local_lr_decay  > 0; 1 = the learning rate stays settings.learning_rate.
  /// @throws ConfigError if local_lr_decay is not above 0.
  void keep_optimizers(local::Solver solver, double local_lr_decay = 1.0);

  // --- The algorithm's client side (algo::ClientProcedure) ---

  /// Installs the algorithm's client procedure: its train() replaces the standard local update,
  /// its reports are collected (take_reports) and it scores the clients (evaluate_each). Each
  /// hosted client gets an empty memory it keeps across rounds.
  void set_procedure(std::shared_ptr<algo::ClientProcedure> procedure);
  /// Reports of the clients trained since the last call: (client id, [L] floats), increasing ids.
  std::vector<std::pair<int, std::vector<double>>> take_reports();
  /// Scores every hosted client with the procedure's evaluate() on its assigned model (NaN for -1)
  /// or, with `local_models`, its local model. @throws ConfigError without a procedure.
  ClientEvaluation evaluate_each(const std::vector<int>& assignment, bool local_models,
                                 ModelSet& models, const algo::AlgorithmState& payload, int round,
                                 std::uint64_t seed);

  // --- Evaluation ---

  /// Test accuracy and loss of every hosted client on its assigned model (NaN for a client
  /// assigned -1, i.e. not participating).
  /// @param assignment  [M] model of every client (global ids), or -1.
  ClientEvaluation evaluate(const std::vector<int>& assignment, ModelSet& models);

  /// Test accuracy and loss of every hosted client's local model (FedSoft's personalised models).
  ClientEvaluation evaluate_local_models(ModelSet& models);

  // --- Persistent state ---

  /// Everything the hosted clients keep across rounds, as named tensors: "local_models" [m, P]
  /// float32 with local models; with kept optimizers (keep_optimizers) their counts and
  /// per-parameter state (KeptOptimizers::add_state); and each client's procedure memory as
  /// "memory.<hosted index>.<name>". Empty for algorithms without any of these.
  algo::AlgorithmState state() const;
  /// Restores what state() returned (after init_local_models and keep_optimizers with the same
  /// settings), so that the next local updates are as the original's, bit for bit
  /// (KeptOptimizers::restore).
  /// @param model          the working model the kept optimizers step (ModelSet::working_model).
  /// @param settings       the local solver the kept optimizers were made with.
  /// @throws DataError if a tensor is missing or has another shape.
  void restore(const algo::AlgorithmState& state, model::Network& model,
               const local::LocalUpdateSettings& settings);

  /// Seconds spent in LibTorch forward/backward work since the last call; resets the counter.
  double take_compute_seconds();

 private:
  /// Hosted indices of the hosted clients among `clients`.
  std::vector<std::int64_t> hosted_among(const std::vector<int>& clients) const;
  /// Hosted client i's local update of `model` (a gradient with settings.gradient_averaging),
  /// mini-batches from the (seed, purpose, client, round) stream, dropout masks from its
  /// dropout_seed; returns its training loss.
  double train_client(model::Network& model, int i, int round, std::uint64_t seed,
                      const local::LocalUpdateSettings& settings,
                      core::Purpose purpose = core::Purpose::kLocalUpdate);
  /// CPU generator of hosted client i's (seed, purpose, client, round) stream, its mini-batch
  /// order.
  at::Generator client_generator(int i, int round, std::uint64_t seed, core::Purpose purpose) const;
  /// core::dropout_seed of hosted client i's (seed, purpose, client, round) stream.
  std::uint64_t dropout_seed(int i, int round, std::uint64_t seed, core::Purpose purpose) const;
  /// Sets the generator of `model`'s dropout layers to model::dropout_generator(dropout_seed)
  /// before hosted client i's forward passes in train mode: its local update, the procedure's
  /// train() and evaluate() (Per-FedAvg's fine-tuning step), so that its dropout masks do not
  /// depend on the rank layout, on the clients trained before it or on the other training threads.
  void seed_dropout(model::Network& model, int i, int round, std::uint64_t seed,
                    core::Purpose purpose) const;
  /// Hosted client i and the model its update starts from (a row of the ModelSet or
  /// algo::kLocalModel), for every client the plan trains, in client order.
  struct TrainingStart {
    int i;
    int start;
  };
  std::vector<TrainingStart> training_starts(const algo::RoundPlan& plan) const;
  /// Whether local_updates may train the clients on several threads (set_training_threads).
  bool trains_on_threads() const;
  /// local_updates on training_threads_ threads, each with its own model (built on this thread at
  /// the first call, kept for later rounds); hands the results to `receive` in client order
  /// afterwards. @throws what a client's update throws.
  void train_on_threads(const std::vector<TrainingStart>& starts, const algo::RoundPlan& plan,
                        ModelSet& models, int round, std::uint64_t seed,
                        const local::LocalUpdateSettings& settings, const TrainedClient& receive,
                        std::vector<double>& train_loss);
  /// Whether the procedure's scores run on several threads too (its runs_concurrently, and
  /// trains_on_threads).
  bool procedure_on_threads() const;
  /// TrainingThreads::run on training_threads_ with models of `models`' architecture.
  void on_threads(ModelSet& models, std::size_t count, const TrainingThreads::Work& work);
  /// Whether local_updates runs `plan` client-batched (set_client_batch).
  bool trains_batched(ModelSet& models, const algo::RoundPlan& plan, std::size_t clients);
  /// local_updates client-batched, client_batch_ clients at a time (fewer where client_batch_bytes_
  /// says so) in decreasing order of their sample counts; hands the results to `receive` in client
  /// order afterwards.
  void train_batched(const std::vector<TrainingStart>& starts, ModelSet& models, int round,
                     std::uint64_t seed, const local::LocalUpdateSettings& settings,
                     const TrainedClient& receive, std::vector<double>& train_loss);
  /// Trains the hosted clients of `chunk` (indices into `starts`) as one client-batched model and
  /// stores their results (flat states or gradients) and losses.
  void train_chunk(const std::vector<TrainingStart>& starts, const std::vector<std::size_t>& chunk,
                   ModelSet& models, int round, std::uint64_t seed,
                   const local::LocalUpdateSettings& settings, std::vector<torch::Tensor>& results,
                   std::vector<double>& train_loss);
  /// Hands hosted client i's trained state (or gradient) to `receive` and keeps it as its local
  /// model.
  void deliver(int i, const torch::Tensor& result, bool gradient, const TrainedClient& receive);
  /// Every model's loss on each training sample of `rows`: [r, K] float64 on the device.
  torch::Tensor per_sample_training_losses(ModelSet& models, const torch::Tensor& rows);
  /// The view of hosted client i in round `round` that the algorithm's client side gets.
  algo::LocalClient view(int i, int round, std::uint64_t seed, const torch::Tensor& server_states);
  /// Per-client means of the sums (NaN where `absent` or, for accuracy, without labels).
  ClientEvaluation per_client_means(const torch::Tensor& loss_sums,
                                    const torch::Tensor& correct_sums,
                                    const torch::Tensor& absent) const;

  int first_;
  model::Objective objective_;
  torch::Device device_;
  StackedSamples train_;
  StackedSamples test_;
  torch::Tensor local_states_;      // [m, P] float32 CPU: persistent local models (FedSoft, FeSEM)
  KeptOptimizers kept_optimizers_;  // enabled by keep_optimizers()
  TrainingThreads training_threads_;  // set_training_threads; its models are train_on_threads'
  int client_batch_ = 1;
  std::int64_t client_batch_bytes_ = 0;
  std::unique_ptr<model::ClientBatchedNetwork> batched_;  // made at the first client-batched update
  std::shared_ptr<algo::ClientProcedure> procedure_;      // the algorithm's client side, or null
  std::vector<algo::AlgorithmState> memories_;            // [m] the procedure's per-client memory
  std::vector<torch::Tensor>
      local_views_;  // [m] row views of local_states_ handed to the procedure
  std::vector<std::pair<int, std::vector<double>>> reports_;  // since the last take_reports()
  double compute_seconds_ = 0.0;
};

}  // namespace cflrun::run
