#include <cflrun/run/clients/kept_optimizers.hpp>

#include <cmath>
#include <string>

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

constexpr const char* kWho = "client state";
constexpr const char* kUpdates = "optimizer_updates";
constexpr const char* kAdamStep = "adam_step";
constexpr const char* kAdamFirst = "adam_exp_avg";
constexpr const char* kAdamSecond = "adam_exp_avg_sq";
constexpr const char* kSgdBuffer = "sgd_momentum_buffer";

using Optimizers = std::vector<std::unique_ptr<torch::optim::Optimizer>>;

/// The key under which a torch::optim optimizer keeps a parameter's state (its TensorImpl).
void* state_key(const torch::Tensor& parameter) { return parameter.unsafeGetTensorImpl(); }

std::int64_t parameter_floats(const std::vector<torch::Tensor>& parameters) {
  std::int64_t floats = 0;
  for (const auto& p : parameters) {
    floats += p.numel();
  }
  return floats;
}

/// Floats of the parameters the kept optimizers step, 0 while no client has one.
std::int64_t kept_floats(const Optimizers& kept) {
  std::int64_t floats = 0;
  for (const auto& optimizer : kept) {
    floats = optimizer ? parameter_floats(optimizer->param_groups()[0].params()) : floats;
  }
  return floats;
}

/// Calls visit(i, offset, p, state) for every parameter p of client i's kept optimizer that has a
/// per-parameter state (of type ParamState), offset being p's first float in the flat state.
template <class ParamState, class Visit>
void for_each_param_state(const Optimizers& kept, Visit visit) {
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (!kept[i]) {
      continue;
    }
    std::int64_t offset = 0;
    for (const auto& p : kept[i]->param_groups()[0].params()) {
      const auto found = kept[i]->state().find(state_key(p));
      if (found != kept[i]->state().end()) {
        visit(static_cast<std::int64_t>(i), offset, p,
              static_cast<const ParamState&>(*found->second));
      }
      offset += p.numel();
    }
  }
}

/// Copies `part` (a per-parameter state tensor shaped as p) into the flat row at `offset`.
void put_flat(torch::Tensor row, std::int64_t offset, const torch::Tensor& p,
              const torch::Tensor& part) {
  row.narrow(0, offset, p.numel()).copy_(part.flatten());
}

/// The slice of a flat row at `offset` shaped and placed as parameter p (a new tensor).
torch::Tensor take_flat(const torch::Tensor& row, std::int64_t offset, const torch::Tensor& p) {
  return row.narrow(0, offset, p.numel()).view(p.sizes()).to(p.device()).clone();
}

/// Checkpointed per-parameter optimizer state, [m, P] float32 rows laid out as the flat state.
struct FlatOptimizerState {
  bool adam = true;
  torch::Tensor steps;   ///< [m] int64, Adam's step count.
  torch::Tensor first;   ///< Adam's exp_avg, or SGD's momentum buffers.
  torch::Tensor second;  ///< Adam's exp_avg_sq (undefined for SGD).
};

/// Gives every parameter of `optimizer` client i's checkpointed state: Adam's step and moments, or
/// SGD's momentum buffer (none without momentum: torch's SGD keeps no state then).
void put_param_states(torch::optim::Optimizer& optimizer, std::int64_t i,
                      const FlatOptimizerState& flat, double momentum) {
  if (!flat.adam && momentum == 0.0) {
    return;
  }
  std::int64_t offset = 0;
  for (const auto& p : optimizer.param_groups()[0].params()) {
    std::unique_ptr<torch::optim::OptimizerParamState> state;
    if (flat.adam) {
      auto adam = std::make_unique<torch::optim::AdamParamState>();
      adam->step(flat.steps[i].item<std::int64_t>());
      adam->exp_avg(take_flat(flat.first[i], offset, p));
      adam->exp_avg_sq(take_flat(flat.second[i], offset, p));
      state = std::move(adam);
    } else {
      auto sgd = std::make_unique<torch::optim::SGDParamState>();
      sgd->momentum_buffer(take_flat(flat.first[i], offset, p));
      state = std::move(sgd);
    }
    optimizer.state()[state_key(p)] = std::move(state);
    offset += p.numel();
  }
}

}  // namespace

KeptOptimizers::KeptOptimizers(int clients, local::Solver solver, double local_lr_decay)
    : enabled_(true),
      solver_(solver),
      local_lr_decay_(local_lr_decay),
      updates_(static_cast<std::size_t>(clients), 0),
      optimizers_(static_cast<std::size_t>(clients)) {
  if (!(local_lr_decay > 0.0)) {
    throw ConfigError("kept optimizers: the learning-rate decay must be above 0, but got " +
                      std::to_string(local_lr_decay));
  }
}

torch::optim::Optimizer* KeptOptimizers::optimizer(int i, model::Network& model,
                                                   const local::LocalUpdateSettings& settings) {
  if (settings.solver != solver_) {
    throw ConfigError(
        "kept optimizers: this local update's --optimizer differs from the solver the clients "
        "keep their optimizers of; keep one solver for the whole run");
  }
  auto& optimizer = optimizers_[static_cast<std::size_t>(i)];
  if (!optimizer) {  // one optimizer per client on the shared working model's parameters
    optimizer = local::make_local_optimizer(model, settings);
  }
  return optimizer.get();
}

double KeptOptimizers::rate(const local::LocalUpdateSettings& settings, std::int64_t r) const {
  // The notebook multiplies lr by 0.99 at every call; lr * decay^r from the count alone is what a
  // resumed run recomputes bit for bit (decay 1 leaves lr exactly as it is).
  return settings.learning_rate * std::pow(local_lr_decay_, static_cast<double>(r));
}

torch::optim::Optimizer* KeptOptimizers::for_update(int i, model::Network& model,
                                                    const local::LocalUpdateSettings& settings) {
  auto* kept = optimizer(i, model, settings);
  const double lr = rate(settings, ++updates_[static_cast<std::size_t>(i)]);
  for (auto& group : kept->param_groups()) {
    group.options().set_lr(lr);
  }
  return kept;
}

local::OptimizerState KeptOptimizers::begin_update(int i,
                                                   const local::LocalUpdateSettings& settings) {
  if (settings.solver != solver_) {
    throw ConfigError(
        "kept optimizers: this local update's --optimizer differs from the solver the clients "
        "keep their optimizers of; keep one solver for the whole run");
  }
  local::OptimizerState state;
  state.learning_rate = rate(settings, ++updates_[static_cast<std::size_t>(i)]);
  const auto& kept = optimizers_[static_cast<std::size_t>(i)];
  if (!kept) {
    return state;
  }
  const auto floats = parameter_floats(kept->param_groups()[0].params());
  const auto flat = [&](const auto& read) {
    auto row = torch::zeros({floats}, torch::kFloat32);
    std::int64_t offset = 0;
    for (const auto& p : kept->param_groups()[0].params()) {
      const auto found = kept->state().find(state_key(p));
      if (found != kept->state().end() && read(*found->second).defined()) {
        put_flat(row, offset, p, read(*found->second));
      }
      offset += p.numel();
    }
    return row;
  };
  if (solver_ == local::Solver::kAdam) {
    for (const auto& [key, param_state] : kept->state()) {
      state.steps = std::max(state.steps,
                             static_cast<const torch::optim::AdamParamState&>(*param_state).step());
    }
    state.first = flat([](const torch::optim::OptimizerParamState& s) {
      return static_cast<const torch::optim::AdamParamState&>(s).exp_avg();
    });
    state.second = flat([](const torch::optim::OptimizerParamState& s) {
      return static_cast<const torch::optim::AdamParamState&>(s).exp_avg_sq();
    });
    return state;
  }
  state.first = flat([](const torch::optim::OptimizerParamState& s) {
    return static_cast<const torch::optim::SGDParamState&>(s).momentum_buffer();
  });
  state.steps = kept->state().empty() ? 0 : 1;  // the momentum buffers exist
  return state;
}

void KeptOptimizers::end_update(int i, const local::OptimizerState& state, model::Network& model,
                                const local::LocalUpdateSettings& settings) {
  auto& kept = *optimizer(i, model, settings);
  for (auto& group : kept.param_groups()) {
    group.options().set_lr(state.learning_rate);
  }
  FlatOptimizerState flat;
  flat.adam = solver_ == local::Solver::kAdam;
  flat.steps = torch::full({1}, state.steps, torch::kInt64);
  flat.first = state.first.to(torch::kFloat32).unsqueeze(0);
  flat.second = flat.adam ? state.second.to(torch::kFloat32).unsqueeze(0) : torch::Tensor();
  put_param_states(kept, 0, flat, settings.momentum);
}

void KeptOptimizers::add_state(algo::AlgorithmState& state) const {
  const auto m = static_cast<std::int64_t>(optimizers_.size());
  const auto floats = kept_floats(optimizers_);
  state.emplace(kUpdates, torch::tensor(updates_, torch::kInt64));
  if (solver_ == local::Solver::kSgd) {
    auto buffers = torch::zeros({m, floats}, torch::kFloat32);
    for_each_param_state<torch::optim::SGDParamState>(
        optimizers_, [&](std::int64_t i, std::int64_t offset, const torch::Tensor& p,
                         const torch::optim::SGDParamState& sgd) {
          if (sgd.momentum_buffer().defined()) {
            put_flat(buffers[i], offset, p, sgd.momentum_buffer());
          }
        });
    state.emplace(kSgdBuffer, buffers);
    return;
  }
  auto steps = torch::zeros({m}, torch::kInt64);
  auto first = torch::zeros({m, floats}, torch::kFloat32);
  auto second = torch::zeros({m, floats}, torch::kFloat32);
  for_each_param_state<torch::optim::AdamParamState>(
      optimizers_, [&](std::int64_t i, std::int64_t offset, const torch::Tensor& p,
                       const torch::optim::AdamParamState& adam) {
        steps[i] = adam.step();
        put_flat(first[i], offset, p, adam.exp_avg());
        put_flat(second[i], offset, p, adam.exp_avg_sq());
      });
  state.emplace(kAdamStep, steps);
  state.emplace(kAdamFirst, first);
  state.emplace(kAdamSecond, second);
}

void KeptOptimizers::restore(const algo::AlgorithmState& state, model::Network& model,
                             const local::LocalUpdateSettings& settings) {
  const auto m = static_cast<std::int64_t>(optimizers_.size());
  FlatOptimizerState flat;
  flat.adam = solver_ == local::Solver::kAdam;
  // Without the counts (a build before them), Adam without decay: its updates ignore the counts.
  const bool counted = state.count(kUpdates) > 0 || !flat.adam || local_lr_decay_ != 1.0;
  const auto updates =
      counted ? algo::state_tensor(state, kWho, kUpdates, {m}) : torch::zeros({m}, torch::kInt64);
  // Which clients have an optimizer: Adam's step count (as before the counts), or SGD's updates.
  flat.steps = flat.adam ? algo::state_tensor(state, kWho, kAdamStep, {m}) : updates;
  *this = KeptOptimizers(static_cast<int>(m), solver_, local_lr_decay_);
  const auto counts = updates.contiguous();
  updates_.assign(counts.data_ptr<std::int64_t>(), counts.data_ptr<std::int64_t>() + m);
  if (flat.steps.count_nonzero().item<std::int64_t>() == 0) {
    return;  // no hosted client updated yet (or none hosted, rank 0): add_state kept [m, 0] rows
  }
  const std::vector<std::int64_t> shape{m, parameter_floats(model.parameters())};
  flat.first = algo::state_tensor(state, kWho, flat.adam ? kAdamFirst : kSgdBuffer, shape);
  flat.second = flat.adam ? algo::state_tensor(state, kWho, kAdamSecond, shape) : torch::Tensor();
  for (std::int64_t i = 0; i < m; ++i) {
    if (flat.steps[i].item<std::int64_t>() > 0) {  // else made at the client's first update
      put_param_states(*optimizer(static_cast<int>(i), model, settings), i, flat,
                       settings.momentum);
    }
  }
}

}  // namespace cflrun::run
