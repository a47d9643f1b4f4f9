// The clients' local updates for any round plan, and their persistent state: local models
// (FedSoft, FeSEM) and optimizers kept across rounds.
#include <cflrun/run/client_group.hpp>

#include "stopwatch.hpp"

#include <limits>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/dropout.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

double ClientGroup::train_client(model::Network& model, int i, int round, std::uint64_t seed,
                                 const local::LocalUpdateSettings& settings,
                                 core::Purpose purpose) {
  const auto inputs = train_.inputs_of(i);
  const auto targets = train_.targets_of(i);
  seed_dropout(model, i, round, seed, purpose);
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

std::uint64_t ClientGroup::dropout_seed(int i, int round, std::uint64_t seed,
                                        core::Purpose purpose) const {
  return core::dropout_seed(seed, purpose, static_cast<std::uint64_t>(first_ + i),
                            static_cast<std::uint64_t>(round));
}

void ClientGroup::seed_dropout(model::Network& model, int i, int round, std::uint64_t seed,
                               core::Purpose purpose) const {
  model::set_dropout_generator(
      model, model::dropout_generator(dropout_seed(i, round, seed, purpose), device_));
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
  if (trains_on_threads()) {
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
    local.optimizer =
        kept_optimizers_.enabled() ? kept_optimizers_.for_update(i, model, settings) : nullptr;
    if (procedure_) {  // the algorithm's own local update (e.g. Per-FedAvg's meta-step)
      auto client_view = view(i, round, seed, models.states());
      seed_dropout(model, i, round, seed, core::Purpose::kLocalUpdate);
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

void ClientGroup::init_local_models(const torch::Tensor& initial) {
  local_states_ =
      initial.to(torch::kFloat32).reshape({1, -1}).repeat({static_cast<std::int64_t>(size()), 1});
}

}  // namespace cflrun::run

namespace cflrun::run {
namespace {

constexpr const char* kWho = "client state";

}  // namespace

void ClientGroup::keep_optimizers(local::Solver solver, double local_lr_decay) {
  kept_optimizers_ = KeptOptimizers(size(), solver, local_lr_decay);
}

algo::AlgorithmState ClientGroup::state() const {
  algo::AlgorithmState state;
  for (std::size_t i = 0; i < memories_.size(); ++i) {
    for (const auto& [name, tensor] : memories_[i]) {
      state.emplace("memory." + std::to_string(i) + "." + name, tensor.clone());
    }
  }
  if (local_states_.defined()) {
    state.emplace("local_models", local_states_.clone());
  }
  if (kept_optimizers_.enabled()) {
    kept_optimizers_.add_state(state);
  }
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
  if (local_states_.defined()) {
    local_states_ = algo::state_tensor(state, kWho, "local_models",
                                       {static_cast<std::int64_t>(size()), local_states_.size(1)})
                        .clone();
  }
  if (kept_optimizers_.enabled()) {
    kept_optimizers_.restore(state, model, settings);
  }
}

}  // namespace cflrun::run
