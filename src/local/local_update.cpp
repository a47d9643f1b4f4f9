#include <cflrun/local/local_update.hpp>

#include <string>
#include <vector>

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::local {

namespace {

void require_samples(std::int64_t inputs, std::int64_t targets, const char* who) {
  if (inputs == 0 || targets != inputs) {
    throw ShapeError(std::string(who) + ": expected n > 0 inputs with n targets, but got " +
                     std::to_string(inputs) + " inputs and " + std::to_string(targets) +
                     " targets");
  }
}

/// The proximal term as mu/2 (U ||w||^2 - 2 <w, a>) with U = sum_s u_s and a = sum_s u_s c_s: it
/// differs from (mu/2) sum_s u_s ||w - c_s||^2 by a constant, so it has the same gradient.
class Proximal {
 public:
  Proximal(const model::Network& model, const ProximalTerm& term) : mu_(term.mu) {
    if (mu_ <= 0.0) {
      return;
    }
    const auto& centers = term.centers;
    if (centers.dim() != 2 || term.importance.dim() != 1 ||
        term.importance.size(0) != centers.size(0)) {
      throw ShapeError("proximal term: expected [K, P] centers and K importance weights, but got " +
                       c10::str(centers.sizes()) + " and " + c10::str(term.importance.sizes()));
    }
    total_weight_ = term.importance.sum().item<double>();
    const auto anchor = term.importance.to(torch::kFloat32).matmul(centers);  // [P]
    std::int64_t offset = 0;
    for (const auto& parameter : model.parameters()) {
      anchors_.push_back(anchor.narrow(0, offset, parameter.numel())
                             .view(parameter.sizes())
                             .to(parameter.device()));
      offset += parameter.numel();
    }
  }

  torch::Tensor add_to(torch::Tensor loss, const model::Network& model) const {
    if (mu_ <= 0.0) {
      return loss;
    }
    const auto parameters = model.parameters();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const auto& w = parameters[i];
      loss = loss + (mu_ / 2.0) * (total_weight_ * w.pow(2).sum() - 2.0 * (w * anchors_[i]).sum());
    }
    return loss;
  }

 private:
  double mu_;
  double total_weight_ = 0.0;
  std::vector<torch::Tensor> anchors_;
};

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_local_optimizer(std::vector<torch::Tensor> parameters,
                                                              const LocalUpdateSettings& settings) {
  if (settings.solver == Solver::kSgd) {
    return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                               torch::optim::SGDOptions(settings.learning_rate)
                                                   .momentum(settings.momentum)
                                                   .weight_decay(settings.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(
      std::move(parameters),
      torch::optim::AdamOptions(settings.learning_rate).weight_decay(settings.weight_decay));
}

std::unique_ptr<torch::optim::Optimizer> make_local_optimizer(model::Network& model,
                                                              const LocalUpdateSettings& settings) {
  return make_local_optimizer(model.parameters(), settings);
}

std::int64_t local_steps(std::int64_t n, const LocalUpdateSettings& settings) {
  const std::int64_t batches_per_epoch = (n + settings.batch_size - 1) / settings.batch_size;
  return settings.max_steps > 0 ? settings.max_steps : settings.local_epochs * batches_per_epoch;
}

std::int64_t local_steps(std::int64_t n, const LocalUpdateSettings& settings,
                         std::int64_t client_max_steps) {
  return client_max_steps > 0 ? client_max_steps : local_steps(n, settings);
}

double local_gradient(model::Network& model, const torch::Tensor& inputs,
                      const torch::Tensor& targets, int batch_size, model::Objective objective) {
  const std::int64_t n = inputs.size(0);
  require_samples(n, targets.size(0), "local_gradient");
  model.train();
  model.zero_grad();
  double loss_sum = 0.0;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    const auto rows = std::min<std::int64_t>(batch_size, n - start);
    // Summed (not mean) batch losses divided by n give the gradient of the mean over all n.
    const auto batch = inputs.narrow(0, start, rows);
    auto loss = model::per_sample_loss(objective, model.forward(batch), batch,
                                       targets.narrow(0, start, rows))
                    .sum();
    (loss / static_cast<double>(n)).backward();
    loss_sum += loss.item<double>();
  }
  return loss_sum / static_cast<double>(n);
}

double local_update(model::Network& model, const torch::Tensor& inputs,
                    const torch::Tensor& targets, const LocalUpdateSettings& settings,
                    at::Generator& generator) {
  const std::int64_t n = inputs.size(0);
  require_samples(n, targets.size(0), "local_update");
  model.train();
  const auto fresh =
      settings.optimizer != nullptr ? nullptr : make_local_optimizer(model, settings);
  torch::optim::Optimizer& optimizer = settings.optimizer != nullptr ? *settings.optimizer : *fresh;
  const Proximal proximal(model, settings.proximal);
  const std::int64_t batches_per_epoch = (n + settings.batch_size - 1) / settings.batch_size;
  std::int64_t steps_left = local_steps(n, settings);
  const std::int64_t epochs = (steps_left + batches_per_epoch - 1) / batches_per_epoch;
  double epoch_loss = 0.0;
  for (std::int64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto order = torch::randperm(n, generator, torch::kLong).to(inputs.device());
    epoch_loss = 0.0;
    std::int64_t batches = 0;
    for (std::int64_t start = 0; start < n && steps_left > 0;
         start += settings.batch_size, ++batches, --steps_left) {
      const auto batch =
          order.narrow(0, start, std::min<std::int64_t>(settings.batch_size, n - start));
      optimizer.zero_grad();
      const auto batch_inputs = inputs.index_select(0, batch);
      const auto loss = model::mean_loss(settings.objective, model.forward(batch_inputs),
                                         batch_inputs, targets.index_select(0, batch));
      proximal.add_to(loss, model).backward();
      optimizer.step();
      epoch_loss += loss.item<double>();
    }
    epoch_loss /= static_cast<double>(batches);
  }
  return epoch_loss;
}

}  // namespace cflrun::local
