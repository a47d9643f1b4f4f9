#include <cflrun/run/model_set.hpp>

#include <stdexcept>
#include <string>
#include <utility>

#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

ModelSet::ModelSet(int num_models, model::Architecture architecture, model::NetworkShape shape,
                   torch::Device device)
    : architecture_(architecture),
      shape_(std::move(shape)),
      working_(model::make_network(architecture_, shape_)),
      device_(device) {
  working_->to(device_);
  states_ = torch::zeros({num_models, model::flat_state_size(*working_)}, torch::kFloat32);
}

void ModelSet::share_all_but_last_layers(int layers) {
  cluster_part_ = model::trailing_layers(*working_, layers);
  shared_ = true;
}

void ModelSet::initialize(std::uint64_t seed, bool same) {
  for (int j = 0; j < size(); ++j) {
    states_[j].copy_(fresh_state(seed, same ? 0U : static_cast<std::uint64_t>(j)));
  }
  if (shared_) {  // one shared copy: model 0's shared layers
    const auto part = states_.narrow(1, cluster_part_.offset, cluster_part_.size).clone();
    states_.copy_(states_[0].expand_as(states_));
    states_.narrow(1, cluster_part_.offset, cluster_part_.size).copy_(part);
  }
}

torch::Tensor ModelSet::fresh_state(std::uint64_t seed, std::uint64_t stream) const {
  torch::manual_seed(core::derive_seed(seed, core::Purpose::kModelInit, stream));
  if (unit_sphere_) {
    const auto direction = torch::randn({state_size()}, torch::kFloat32);
    return direction / direction.norm();
  }
  const auto fresh = model::make_network(architecture_, shape_);
  return model::flatten_state(*fresh);
}

std::shared_ptr<model::Network> ModelSet::make_network() const {
  auto network = model::make_network(architecture_, shape_);
  network->to(device_);
  return network;
}

model::Network& ModelSet::load(int j) {
  if (j < 0 || j >= size()) {
    throw std::out_of_range("ModelSet::load: model " + std::to_string(j) + " of " +
                            std::to_string(size()));
  }
  model::load_flat_state(*working_, states_[j]);
  working_->train();
  return *working_;
}

void ModelSet::update(const std::vector<double>& weighted_sums, double learning_rate,
                      bool gradient) {
  const std::int64_t k = size();
  const std::int64_t p = state_size();
  if (static_cast<std::int64_t>(weighted_sums.size()) != k * (p + 1)) {
    throw ShapeError("ModelSet: expected " + std::to_string(k * (p + 1)) +
                     " values (K*P sums then K counts), but got " +
                     std::to_string(weighted_sums.size()));
  }
  auto all =
      torch::from_blob(const_cast<double*>(weighted_sums.data()), {k * (p + 1)}, torch::kFloat64);
  const auto sums = all.narrow(0, 0, k * p).view({k, p});
  const auto counts = all.narrow(0, k * p, k);
  for (std::int64_t j = 0; j < k; ++j) {
    const double n = counts[j].item<double>();
    if (n <= 0.0) {
      continue;  // a model nobody trained keeps its state
    }
    const auto mean = sums[j] / n;
    if (gradient) {
      states_[j].copy_((states_[j].to(torch::kFloat64) - learning_rate * mean).to(torch::kFloat32));
    } else {
      states_[j].copy_(mean.to(torch::kFloat32));
    }
  }
  if (shared_) {
    update_shared(sums, counts, learning_rate, gradient);
  }
}

void ModelSet::update_shared(const torch::Tensor& sums, const torch::Tensor& counts,
                             double learning_rate, bool gradient) {
  const double n = counts.sum().item<double>();
  if (n <= 0.0) {
    return;
  }
  const auto mean = sums.sum(0) / n;  // [P] average over all clients, whatever model they trained
  const auto current = states_[0].to(torch::kFloat64);
  const auto shared = (gradient ? current - learning_rate * mean : mean).to(torch::kFloat32);
  const auto part = states_.narrow(1, cluster_part_.offset, cluster_part_.size).clone();
  states_.copy_(shared.expand_as(states_));
  states_.narrow(1, cluster_part_.offset, cluster_part_.size).copy_(part);
}

void ModelSet::average(const std::vector<double>& weighted_sums) {
  update(weighted_sums, 0.0, false);
}

std::vector<bool> ModelSet::replace(const torch::Tensor& models) {
  if (models.dim() != 2 || models.size(0) != size() || models.size(1) != state_size()) {
    throw ShapeError("ModelSet::replace: expected [" + std::to_string(size()) + ", " +
                     std::to_string(state_size()) + "] models, but got " +
                     c10::str(models.sizes()));
  }
  const auto next = models.to(states_.options());
  const auto changed = states_.ne(next).any(1).contiguous().to(torch::kCPU);
  states_.copy_(next);
  const auto* flags = changed.data_ptr<bool>();
  return std::vector<bool>(flags, flags + changed.numel());
}

void ModelSet::average_heads(const std::vector<double>& weighted_head_sums, model::FlatRange head,
                             const torch::Tensor& previous_heads) {
  const std::int64_t k = size();
  if (static_cast<std::int64_t>(weighted_head_sums.size()) != k * (head.size + 1)) {
    throw ShapeError("ModelSet::average_heads: expected " + std::to_string(k * (head.size + 1)) +
                     " values (K*H head sums then K weights), but got " +
                     std::to_string(weighted_head_sums.size()));
  }
  const auto all = torch::from_blob(const_cast<double*>(weighted_head_sums.data()),
                                    {k * (head.size + 1)}, torch::kFloat64);
  for (std::int64_t j = 0; j < k; ++j) {
    const double weight = all[k * head.size + j].item<double>();
    auto part = states_[j].narrow(0, head.offset, head.size);
    if (weight > 0.0) {
      part.copy_((all.narrow(0, j * head.size, head.size) / weight).to(torch::kFloat32));
    } else {
      part.copy_(previous_heads[j]);
    }
  }
}

void ModelSet::gradient_step(const std::vector<double>& weighted_gradient_sums,
                             double learning_rate) {
  update(weighted_gradient_sums, learning_rate, true);
}

}  // namespace cflrun::run
