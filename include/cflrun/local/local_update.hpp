#pragma once
/// @file
/// A client's local update: tau epochs of mini-batch Adam on its own data.

#include <cstdint>

#include <memory>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cflrun/local/solver.hpp>
#include <cflrun/model/network.hpp>
#include <cflrun/model/objective.hpp>

namespace cflrun::local {

/// FedSoft's proximal term (FedSoft Eq. 4): (mu / 2) sum_s u_s ||w - c_s||^2, w being the model's
/// parameters and c_s the same parameters of center s (buffers, e.g. BatchNorm statistics, are
/// not regularised). Off while mu == 0.
struct ProximalTerm {
  double mu = 0.0;           ///< mu >= 0, weight of the term.
  torch::Tensor centers;     ///< [K, P] float32 CPU flat states c_s (run::ModelSet::states()).
  torch::Tensor importance;  ///< [K] float64 importance weights u_s of the client.
};

/// Hyperparameters of LocalUpdate (CLoVE Alg. 1 line 11; Sec. 5.1: Adam, batch 100, tau = 1).
struct LocalUpdateSettings {
  bool gradient_averaging =
      false;             ///< Option II: send one gradient instead of training tau epochs.
  int local_epochs = 1;  ///< tau: passes over the client's training data.
  /// > 0: exactly this many mini-batch steps instead of local_epochs epochs, reshuffling at every
  /// pass over the data (FlexCFL's pre-training iterations).
  int max_steps = 0;
  int batch_size = 100;           ///< samples per mini-batch; the last batch may be smaller.
  double learning_rate = 1e-3;    ///< step size gamma of the optimizer.
  Solver solver = Solver::kAdam;  ///< the optimizer.
  double momentum = 0.0;          ///< SGD momentum in [0, 1) (0 = plain SGD); unused by Adam.
  double weight_decay =
      0.0;  ///< L2 penalty coefficient added to the gradients (torch's weight_decay), >= 0.
  model::Objective objective = model::Objective::kClassification;  ///< the loss minimised.
  ProximalTerm proximal;  ///< FedSoft: added to every mini-batch loss when proximal.mu > 0.
  /// If set, the update steps this optimizer (built by make_local_optimizer on the same model's
  /// parameters) instead of a fresh one, so its state carries over between a client's updates
  /// (FedSoft's official client keeps one optimizer for its local model). Not owned.
  torch::optim::Optimizer* optimizer = nullptr;
};

/// A fresh optimizer of `settings.solver` on `model`'s parameters (learning rate, momentum, weight
/// decay from `settings`).
std::unique_ptr<torch::optim::Optimizer> make_local_optimizer(model::Network& model,
                                                              const LocalUpdateSettings& settings);

/// The same on a subset of parameters (e.g. FedPAC trains the head, then the body).
std::unique_ptr<torch::optim::Optimizer> make_local_optimizer(std::vector<torch::Tensor> parameters,
                                                              const LocalUpdateSettings& settings);

/// Mini-batch steps of a local update over n >= 1 samples: settings.max_steps when > 0, else
/// local_epochs * ceil(n / batch_size) (CLoVE Alg. 1 line 11, tau epochs).
std::int64_t local_steps(std::int64_t n, const LocalUpdateSettings& settings);

/// Mini-batch steps of one client's local update over n >= 1 samples: `client_max_steps` when > 0
/// (a straggler's partial work: the steps it finished by the round deadline, issue 45), else
/// local_steps(n, settings).
std::int64_t local_steps(std::int64_t n, const LocalUpdateSettings& settings,
                         std::int64_t client_max_steps);

/// Trains `model` in place on one client's data with a fresh optimizer (make_local_optimizer: no
/// state carries over between updates, as in the official CLoVE code; settings.optimizer overrides
/// it), with exactly settings.max_steps mini-batch steps when it is > 0,
/// the objective's mean loss
/// (model::mean_loss) plus settings.proximal if its mu > 0, mini-batches in an order drawn from
/// `generator` (one shuffle per epoch).
/// @param inputs     [n, ...sample shape] float32 on the model's device.
/// @param targets    [n] int64 labels or float32 values on the model's device (see
/// model::per_sample_loss).
/// @param generator  CPU generator of the (seed, kLocalUpdate, client, round) stream.
/// @return           mean mini-batch training loss over the last epoch (the objective's units;
///                   without the proximal term).
/// @throws ShapeError if inputs and targets disagree in n or n == 0, or the proximal centers are
///         not [K, P] with K importance weights.
double local_update(model::Network& model, const torch::Tensor& inputs,
                    const torch::Tensor& targets, const LocalUpdateSettings& settings,
                    at::Generator& generator);

/// A client's gradient for gradient averaging (CLoVE Alg. 1 line 12, Option II; IFCA Alg. 1):
/// the gradient of its mean training loss at the model's current parameters, accumulated over
/// mini-batches of `batch_size` in data order (so it is the full-batch gradient, deterministic).
/// Leaves the gradient in the parameters' `.grad()`; the parameters are not changed.
/// @param inputs   [n, ...sample shape] float32 on the model's device.
/// @param targets  [n] int64 labels or float32 values.
/// @return         the mean training loss at those parameters (the objective's units).
/// @throws ShapeError if inputs and targets disagree in n or n == 0.
double local_gradient(model::Network& model, const torch::Tensor& inputs,
                      const torch::Tensor& targets, int batch_size, model::Objective objective);

}  // namespace cflrun::local
