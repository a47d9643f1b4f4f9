#pragma once
/// @file
/// The clients one rank hosts and everything they keep across rounds: their samples, stacked so
/// that one forward pass serves many clients, their local models, the algorithm's per-client
/// memories and their kept optimizers, with the views and random streams each client's work is
/// drawn from. What a client does is its algorithm's algo::ClientProcedure; how the rank runs its
/// clients, a ClientExecutor (client_executor.hpp).

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>
#include <cflrun/run/clients/kept_optimizers.hpp>
#include <cflrun/run/clients/stacked_samples.hpp>

namespace cflrun::run {

/// Clients [first, first + m) of a run, hosted on this rank (hosted index i is client first + i).
class HostedClients {
 public:
  /// Materialises the clients' samples on `device`.
  /// @param first, end  client ids [first, end) of `data`; may be empty.
  /// @param objective   the loss of queries, local updates and evaluation.
  /// @throws what data.samples throws for a missing or malformed client (DataError).
  HostedClients(const data::ClientData& data, int first, int end, model::Objective objective,
                torch::Device device);

  /// Materialises the samples again with every hosted client as a member of its cluster in
  /// `clusters` (a changing population, issue 45: data.samples_in), on the same device; local
  /// models, memories and kept optimizers stay.
  /// @param clusters  [M] cluster of every client of the run.
  /// @throws ConfigError if data.samples_in is empty (data that cannot move between clusters).
  void move_samples(const data::ClientData& data, const std::vector<int>& clusters);

  /// The steps each client may take in its local updates (stragglers' partial work), [M] for
  /// every client of the run (0 = its whole update); the views carry them as max_steps.
  void set_step_limits(std::vector<std::int64_t> limits) { step_limits_ = std::move(limits); }
  /// Hosted client i's step limit (0 = its whole update).
  std::int64_t step_limit(int i) const {
    return step_limits_.empty() ? 0 : step_limits_.at(static_cast<std::size_t>(first_ + i));
  }

  /// Global id of the first hosted client.
  int first_client() const { return first_; }
  /// Number m of hosted clients (0 on the server rank when there are workers).
  int size() const { return static_cast<int>(train_.counts().size()); }
  /// Whether global client `client` is hosted here.
  bool hosts(int client) const { return client >= first_ && client < first_ + size(); }
  /// Hosted indices of the hosted clients among `clients` (global ids, increasing).
  std::vector<std::int64_t> hosted_among(const std::vector<int>& clients) const;
  /// The hosted clients' training samples, client after client.
  const StackedSamples& train() const { return train_; }
  /// The hosted clients' test samples, client after client.
  const StackedSamples& test() const { return test_; }
  /// The run's loss (classification, regression or reconstruction).
  model::Objective objective() const { return objective_; }
  /// Where the samples (and the clients' models) live.
  torch::Device device() const { return device_; }

  /// Gives every hosted client a persistent local model, a copy of `initial` (the client initial
  /// model of FedSoft and FeSEM, the global model of FedALA).
  /// @param initial  [P] float32 flat state.
  void init_local_models(const torch::Tensor& initial);
  /// Whether the clients keep local models (init_local_models was called).
  bool has_local_models() const { return local_states_.defined(); }
  /// Hosted client i's local model, [P] float32 CPU, a view (writes reach it).
  /// @throws ConfigError if the clients keep no local models.
  torch::Tensor local_model(int i) const;
  /// Keeps a trained flat state as hosted client i's local model when the clients keep them
  /// (FedSoft, FeSEM, FedProto, FedALA: every trained state becomes the local model).
  /// @param trained  [P] float flat state.
  void keep_trained(int i, const torch::Tensor& trained);

  /// Each hosted client keeps its own optimizer across its local updates (algo::Traits::
  /// keeps_optimizers: FedSoft's official client, the CFL notebook) instead of a fresh one per
  /// update (KeptOptimizers).
  /// @param local_lr_decay  > 0; 1 = the learning rate stays the run's.
  /// @throws ConfigError if local_lr_decay is not above 0.
  void keep_optimizers(local::Solver solver, double local_lr_decay = 1.0);
  /// The clients' kept optimizers (enabled() false unless keep_optimizers was called).
  KeptOptimizers& kept_optimizers() { return kept_optimizers_; }
  const KeptOptimizers& kept_optimizers() const { return kept_optimizers_; }

  /// Clears every client's procedure memory (a new client procedure).
  void clear_memories();
  /// The view of hosted client i in round `round` that its procedure gets: its samples (views of
  /// the stacks), local model (a view), memory and the server models. Not safe to call on several
  /// threads at once (it keeps the local model's view).
  /// @param server_states  [K, P] float32 CPU, the current server models (may be undefined).
  algo::LocalClient view(int i, int round, std::uint64_t seed, const torch::Tensor& server_states);
  /// Sets the generator of `model`'s dropout layers to hosted client i's own, from its (seed,
  /// `purpose`, client, round) stream's core::dropout_seed, before the client's forward passes in
  /// train mode, so that its dropout masks depend neither on the rank layout nor on the clients
  /// trained before it nor on the threads.
  void seed_dropout(model::Network& model, int i, int round, std::uint64_t seed,
                    core::Purpose purpose) const;

  /// Everything the hosted clients keep across rounds, as named tensors: "local_models" [m, P]
  /// float32 with local models; with kept optimizers their counts and per-parameter state
  /// (KeptOptimizers::add_state); and each client's procedure memory as
  /// "memory.<hosted index>.<name>". Empty for algorithms without any of these.
  algo::AlgorithmState state() const;
  /// Restores what state() returned (after init_local_models and keep_optimizers with the same
  /// settings), so that the next local updates are as the original's, bit for bit
  /// (KeptOptimizers::restore).
  /// @param model     the working model the kept optimizers step (ModelSet::working_model).
  /// @param settings  the local solver the kept optimizers were made with.
  /// @throws DataError if a tensor is missing or has another shape.
  void restore(const algo::AlgorithmState& state, model::Network& model,
               const local::LocalUpdateSettings& settings);

 private:
  int first_;
  model::Objective objective_;
  torch::Device device_;
  StackedSamples train_;
  StackedSamples test_;
  torch::Tensor local_states_;                  // [m, P] float32 CPU: persistent local models
  KeptOptimizers kept_optimizers_;              // enabled by keep_optimizers()
  std::vector<algo::AlgorithmState> memories_;  // [m] the procedure's per-client memory
  std::vector<torch::Tensor> local_views_;      // [m] row views of local_states_ handed out
  std::vector<std::int64_t> step_limits_;       // [M] or empty: stragglers' partial work
};

}  // namespace cflrun::run
