// The client side of soft clustering (FedSoft Alg. 1): importance weights, persistent local
// models with proximal local updates, and their evaluation.
#include <cflrun/run/client_group.hpp>

#include "scores.hpp"
#include "stopwatch.hpp"

#include <limits>

#include <torch/torch.h>

#include <cflrun/algo/soft_clustering.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

torch::Tensor ClientGroup::importance_weights(ModelSet& models, double smoother) {
  Stopwatch watch(compute_seconds_);
  const auto all = torch::arange(train_.targets.size(0), torch::TensorOptions(device_).dtype(torch::kLong));
  const auto losses = per_sample_training_losses(models, all).to(torch::kCPU);
  auto importance = torch::empty({static_cast<std::int64_t>(size()), models.size()}, torch::kFloat64);
  for (int i = 0; i < size(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    importance[i].copy_(algo::importance_weights(losses.narrow(0, train_offsets_[at], train_counts_[at]), smoother));
  }
  return importance;
}

void ClientGroup::init_local_models(const torch::Tensor& initial, bool keep_optimizers) {
  local_states_ = initial.to(torch::kFloat32).reshape({1, -1}).repeat({static_cast<std::int64_t>(size()), 1});
  keep_optimizers_ = keep_optimizers;
  local_optimizers_.clear();
  local_optimizers_.resize(static_cast<std::size_t>(size()));
}

std::vector<double> ClientGroup::proximal_updates(const torch::Tensor& contributions, const torch::Tensor& importance,
                                                  ModelSet& models, int round, std::uint64_t seed,
                                                  const LocalUpdateSettings& settings,
                                                  std::vector<double>& train_loss) {
  if (!local_states_.defined()) {
    throw ConfigError("ClientGroup::proximal_updates: call init_local_models first");
  }
  Stopwatch watch(compute_seconds_);
  const std::int64_t k = models.size();
  const std::int64_t p = models.state_size();
  auto sums = torch::zeros({k * p + k}, torch::kFloat64);
  train_loss.assign(static_cast<std::size_t>(size()), std::numeric_limits<double>::quiet_NaN());
  auto local = settings;
  local.proximal.centers = models.states();
  auto& model = models.working_model();
  for (int i = 0; i < size(); ++i) {
    const int client = first_ + i;
    const auto weights = contributions.select(/*dim=*/1, client);  // [K]
    if (!weights.gt(0.0).any().item<bool>()) {
      continue;  // not selected for any center this round
    }
    const auto at = static_cast<std::size_t>(i);
    model::load_flat_state(model, local_states_[i]);
    local.proximal.importance = importance[i];
    if (keep_optimizers_) {  // one Adam per client on the shared working model's parameters
      auto& optimizer = local_optimizers_[at];
      if (!optimizer) {
        optimizer = std::make_unique<torch::optim::Adam>(model.parameters(),
                                                         torch::optim::AdamOptions(settings.learning_rate));
      }
      local.optimizer = optimizer.get();
    }
    train_loss[at] = train_client(model, i, round, seed, local);
    local_states_[i].copy_(model::flatten_state(model));
    const auto state = local_states_[i].to(torch::kFloat64);
    for (std::int64_t s = 0; s < k; ++s) {
      const double weight = weights[s].item<double>();
      if (weight > 0.0) {
        sums.narrow(0, s * p, p).add_(state, weight);
        sums[k * p + s] += weight;
      }
    }
  }
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
}

ClientEvaluation ClientGroup::evaluate_local_models(ModelSet& models) {
  Stopwatch watch(compute_seconds_);
  const auto m = static_cast<std::int64_t>(size());
  const auto options = torch::TensorOptions(device_).dtype(torch::kFloat64);
  auto loss_sums = torch::zeros({m}, options);
  auto correct_sums = torch::zeros({m}, options);
  auto& model = models.working_model();
  for (std::int64_t i = 0; i < m; ++i) {
    model::load_flat_state(model, local_states_[i]);
    const auto rows = test_.owner.eq(i).nonzero().flatten();
    add_scores(model, objective_, test_.inputs, test_.targets, test_.owner, rows, loss_sums, correct_sums);
  }
  return per_client_means(loss_sums, correct_sums, torch::zeros({m}, options.dtype(torch::kBool)));
}

}  // namespace cflrun::run
