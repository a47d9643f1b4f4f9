// The clients' local updates for any round plan, and their persistent state: local models
// (FedSoft, FeSEM) and optimizers kept across rounds.
#include <cflrun/run/client_group.hpp>

#include "stopwatch.hpp"

#include <limits>

#include <torch/optim/adam.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

double ClientGroup::train_client(model::Network& model, int i, int round, std::uint64_t seed,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) {
  const auto at = static_cast<std::size_t>(i);
  const auto inputs = train_.inputs.narrow(0, train_offsets_[at], train_counts_[at]);
  const auto targets = train_.targets.narrow(0, train_offsets_[at], train_counts_[at]);
  if (settings.gradient_averaging) {
    return local::local_gradient(model, inputs, targets, settings.batch_size, settings.objective);
  }
  auto generator = client_generator(i, round, seed, purpose);
  return local::local_update(model, inputs, targets, settings, generator);
}

at::Generator ClientGroup::client_generator(int i, int round, std::uint64_t seed,
                                            core::Purpose purpose) const {
  return core::make_torch_generator(seed, purpose, static_cast<std::uint64_t>(first_ + i),
                                    static_cast<std::uint64_t>(round));
}

torch::optim::Optimizer* ClientGroup::kept_optimizer(int i, model::Network& model,
                                                     const local::LocalUpdateSettings& settings) {
  if (settings.solver != local::Solver::kAdam) {
    throw ConfigError(
        "clients keep their optimizer's state across rounds only for --optimizer adam");
  }
  auto& optimizer = local_optimizers_[static_cast<std::size_t>(i)];
  if (!optimizer) {  // one optimizer per client on the shared working model's parameters
    optimizer = local::make_local_optimizer(model, settings);
  }
  return optimizer.get();
}

std::vector<ClientGroup::TrainingStart> ClientGroup::training_starts(
    const algo::RoundPlan& plan) const {
  std::vector<TrainingStart> starts;
  for (int i = 0; i < size(); ++i) {
    const int client = first_ + i;
    const int start = plan.start.at(static_cast<std::size_t>(client));
    if (start == algo::kNoUpdate) {
      continue;
    }
    if (start == algo::kLocalModel && !local_states_.defined()) {
      throw ConfigError("round plan: client " + std::to_string(client) +
                        " trains its local model, but the clients "
                        "keep none (the algorithm must declare keeps_local_models)");
    }
    starts.push_back({i, start});
  }
  return starts;
}

void ClientGroup::deliver(int i, const torch::Tensor& result, bool gradient,
                          const TrainedClient& receive) {
  // Option I sends the locally trained state, Option II the gradient (CLoVE Alg. 1 lines 11-12).
  if (!gradient && local_states_.defined()) {
    local_states_[i].copy_(result);
  }
  receive(first_ + i, result.to(torch::kFloat64));
}

void ClientGroup::local_updates(const algo::RoundPlan& plan, ModelSet& models, int round,
                                std::uint64_t seed, const local::LocalUpdateSettings& settings,
                                const TrainedClient& receive, std::vector<double>& train_loss) {
  Stopwatch watch(compute_seconds_);
  train_loss.assign(static_cast<std::size_t>(size()), std::numeric_limits<double>::quiet_NaN());
  auto local = settings;
  if (plan.proximal_weights.defined()) {
    local.proximal.centers = models.states();
  }
  const auto starts = training_starts(plan);
  if (trains_batched(models, plan, starts.size())) {
    train_batched(starts, models, round, seed, local, receive, train_loss);
    return;
  }
  if (trains_on_threads(models)) {
    train_on_threads(starts, plan, models, round, seed, local, receive, train_loss);
    return;
  }
  for (const auto& [i, start] : starts) {
    const int client = first_ + i;
    auto& model = start == algo::kLocalModel ? models.working_model() : models.load(start);
    if (start == algo::kLocalModel) {
      model::load_flat_state(model, local_states_[i]);
    }
    if (plan.proximal_weights.defined()) {
      local.proximal.importance = plan.proximal_weights[client];
    }
    local.optimizer = keep_optimizers_ ? kept_optimizer(i, model, settings) : nullptr;
    if (procedure_) {  // the algorithm's own local update (e.g. Per-FedAvg's meta-step)
      auto client_view = view(i, round, seed, models.states());
      train_loss[static_cast<std::size_t>(i)] =
          procedure_->train(client_view, model, local, plan.payload);
      if (procedure_->report_length() > 0) {
        reports_.emplace_back(client, procedure_->report(client_view, model));
      }
    } else {
      train_loss[static_cast<std::size_t>(i)] = train_client(model, i, round, seed, local);
    }
    deliver(
        i,
        settings.gradient_averaging ? model::flatten_gradients(model) : model::flatten_state(model),
        settings.gradient_averaging, receive);
  }
}

void ClientGroup::init_local_models(const torch::Tensor& initial, bool keep_optimizers) {
  local_states_ =
      initial.to(torch::kFloat32).reshape({1, -1}).repeat({static_cast<std::int64_t>(size()), 1});
  keep_optimizers_ = keep_optimizers;
  local_optimizers_.clear();
  local_optimizers_.resize(static_cast<std::size_t>(size()));
}

}  // namespace cflrun::run

namespace cflrun::run {
namespace {

constexpr const char* kWho = "client state";

/// The key under which a torch::optim optimizer keeps a parameter's state (its TensorImpl).
void* state_key(const torch::Tensor& parameter) { return parameter.unsafeGetTensorImpl(); }

std::int64_t parameter_floats(const std::vector<torch::Tensor>& parameters) {
  std::int64_t floats = 0;
  for (const auto& p : parameters) {
    floats += p.numel();
  }
  return floats;
}

}  // namespace

algo::AlgorithmState ClientGroup::state() const {
  algo::AlgorithmState state;
  for (std::size_t i = 0; i < memories_.size(); ++i) {
    for (const auto& [name, tensor] : memories_[i]) {
      state.emplace("memory." + std::to_string(i) + "." + name, tensor.clone());
    }
  }
  if (!local_states_.defined()) {
    return state;
  }
  state.emplace("local_models", local_states_.clone());
  if (!keep_optimizers_) {
    return state;
  }
  const auto m = static_cast<std::int64_t>(size());
  std::int64_t floats = 0;
  for (const auto& optimizer : local_optimizers_) {
    floats = optimizer ? parameter_floats(optimizer->param_groups()[0].params()) : floats;
  }
  auto steps = torch::zeros({m}, torch::kInt64);
  auto first = torch::zeros({m, floats}, torch::kFloat32);
  auto second = torch::zeros({m, floats}, torch::kFloat32);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto& optimizer = local_optimizers_[static_cast<std::size_t>(i)];
    std::int64_t offset = 0;
    for (const auto& p :
         optimizer ? optimizer->param_groups()[0].params() : std::vector<torch::Tensor>{}) {
      const auto found = optimizer->state().find(state_key(p));
      if (found != optimizer->state().end()) {
        const auto& adam = static_cast<const torch::optim::AdamParamState&>(*found->second);
        steps[i] = adam.step();
        first[i].narrow(0, offset, p.numel()).copy_(adam.exp_avg().flatten());
        second[i].narrow(0, offset, p.numel()).copy_(adam.exp_avg_sq().flatten());
      }
      offset += p.numel();
    }
  }
  state.emplace("adam_step", steps);
  state.emplace("adam_exp_avg", first);
  state.emplace("adam_exp_avg_sq", second);
  return state;
}

void ClientGroup::restore(const algo::AlgorithmState& state, model::Network& model,
                          const local::LocalUpdateSettings& settings) {
  for (auto& memory : memories_) {
    memory.clear();
  }
  for (const auto& [name, tensor] : state) {
    if (name.rfind("memory.", 0) == 0) {  // memory.<hosted index>.<name>
      const auto dot = name.find('.', 7);
      memories_.at(std::stoul(name.substr(7, dot - 7)))
          .emplace(name.substr(dot + 1), tensor.clone());
    }
  }
  if (!local_states_.defined()) {
    return;
  }
  const auto m = static_cast<std::int64_t>(size());
  local_states_ =
      algo::state_tensor(state, kWho, "local_models", {m, local_states_.size(1)}).clone();
  if (!keep_optimizers_) {
    return;
  }
  const auto parameters = model.parameters();
  const auto floats = parameter_floats(parameters);
  const auto steps = algo::state_tensor(state, kWho, "adam_step", {m});
  local_optimizers_.clear();
  local_optimizers_.resize(static_cast<std::size_t>(m));
  if (steps.count_nonzero().item<std::int64_t>() == 0) {
    return;  // no hosted client updated yet (or none hosted, rank 0): state() kept [m, 0] moments
  }
  const auto first = algo::state_tensor(state, kWho, "adam_exp_avg", {m, floats});
  const auto second = algo::state_tensor(state, kWho, "adam_exp_avg_sq", {m, floats});
  for (std::int64_t i = 0; i < m; ++i) {
    if (steps[i].item<std::int64_t>() == 0) {
      continue;  // no update yet: the optimizer is made at the client's first update
    }
    auto* optimizer = kept_optimizer(static_cast<int>(i), model, settings);
    std::int64_t offset = 0;
    for (const auto& p : parameters) {
      auto adam = std::make_unique<torch::optim::AdamParamState>();
      adam->step(steps[i].item<std::int64_t>());
      adam->exp_avg(first[i].narrow(0, offset, p.numel()).view(p.sizes()).to(p.device()).clone());
      adam->exp_avg_sq(
          second[i].narrow(0, offset, p.numel()).view(p.sizes()).to(p.device()).clone());
      optimizer->state()[state_key(p)] = std::move(adam);
      offset += p.numel();
    }
  }
}

}  // namespace cflrun::run
