#pragma once
/// @file
/// The optimizers clients keep across their local updates (algo::Traits::keeps_optimizers:
/// FedSoft's official client, --fedsoft-optimizer persistent; the CFL notebook's SGD with momentum,
/// cfl-flexcfl-fesem-setup.md Sec. 1) instead of a fresh one per update.

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/local/stacked_optimizer.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::run {

/// One optimizer per hosted client, made on the working model's parameters at the client's first
/// local update; its per-parameter state (Adam's moments, SGD's momentum buffers) carries over
/// from update to update. Before the client's r-th update (r = 1, 2, ...) its learning rate is set
/// to settings.learning_rate * local_lr_decay^r (algo::Traits::local_lr_decay; the CFL notebook's
/// 0.99 per call), computed from the count alone so that a resumed run repeats it bit for bit.
class KeptOptimizers {
 public:
  /// No client keeps an optimizer (enabled() is false).
  KeptOptimizers() = default;
  /// Each of `clients` hosted clients keeps an optimizer of `solver`.
  /// @param local_lr_decay  > 0; 1 = the learning rate stays settings.learning_rate.
  /// @throws ConfigError if local_lr_decay is not above 0.
  KeptOptimizers(int clients, local::Solver solver, double local_lr_decay);

  /// Whether the clients keep optimizers.
  bool enabled() const { return enabled_; }

  /// The optimizer for hosted client i's next local update: counts the update (r) and sets its
  /// learning rate to settings.learning_rate * local_lr_decay^r.
  /// @throws ConfigError if settings.solver is not the kept solver.
  torch::optim::Optimizer* for_update(int i, model::Network& model,
                                      const local::LocalUpdateSettings& settings);

  /// Hosted client i's optimizer state for its next local update run client-batched: counts the
  /// update (r) like for_update, with learning rate settings.learning_rate * local_lr_decay^r, and
  /// its steps and moments so far in the flat parameter layout (steps 0 before its first update).
  /// @throws ConfigError if settings.solver is not the kept solver.
  local::OptimizerState begin_update(int i, const local::LocalUpdateSettings& settings);
  /// Keeps `state`, hosted client i's optimizer state after a client-batched update, as its
  /// optimizer (made on `model`'s parameters, the working model, at first use).
  void end_update(int i, const local::OptimizerState& state, model::Network& model,
                  const local::LocalUpdateSettings& settings);

  /// Adds to `state`: "optimizer_updates" [m] int64, the local updates each client has run with
  /// its optimizer (0: none made yet), and the per-parameter state laid out as the flat state: for
  /// Adam "adam_step" [m] int64 (0 for a client without an optimizer yet), "adam_exp_avg" and
  /// "adam_exp_avg_sq" [m, P] float32, for SGD "sgd_momentum_buffer" [m, P] float32 (zeros without
  /// momentum); the [m, P] are [m, 0] while no client has an optimizer.
  void add_state(algo::AlgorithmState& state) const;

  /// Restores what add_state added, so that the next updates are as the original's, bit for bit.
  /// A state without "optimizer_updates" (a build before the counts, which kept Adam only)
  /// restores Adam without learning-rate decay, whose updates do not depend on the counts.
  /// @param model     the working model the optimizers step (ModelSet::working_model).
  /// @param settings  the local solver the optimizers were made with.
  /// @throws DataError if a tensor is missing or has another shape.
  void restore(const algo::AlgorithmState& state, model::Network& model,
               const local::LocalUpdateSettings& settings);

 private:
  /// The learning rate of client i's r-th update.
  double rate(const local::LocalUpdateSettings& settings, std::int64_t r) const;
  /// Client i's optimizer, made on `model`'s parameters at first use.
  torch::optim::Optimizer* optimizer(int i, model::Network& model,
                                     const local::LocalUpdateSettings& settings);

  bool enabled_ = false;
  local::Solver solver_ = local::Solver::kAdam;
  double local_lr_decay_ = 1.0;
  std::vector<std::int64_t> updates_;                                 // [m]
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers_;  // [m], null until made
};

}  // namespace cflrun::run
