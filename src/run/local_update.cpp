#include <cflrun/run/local_update.hpp>

#include <string>

#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::run {

namespace {

void require_samples(std::int64_t inputs, std::int64_t targets, const char* who) {
  if (inputs == 0 || targets != inputs) {
    throw ShapeError(std::string(who) + ": expected n > 0 inputs with n targets, but got " +
                     std::to_string(inputs) + " inputs and " + std::to_string(targets) + " targets");
  }
}

}  // namespace

double local_gradient(model::Network& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                      int batch_size, model::Objective objective) {
  const std::int64_t n = inputs.size(0);
  require_samples(n, targets.size(0), "local_gradient");
  model.train();
  model.zero_grad();
  double loss_sum = 0.0;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    const auto rows = std::min<std::int64_t>(batch_size, n - start);
    // Summed (not mean) batch losses divided by n give the gradient of the mean over all n.
    const auto batch = inputs.narrow(0, start, rows);
    auto loss = model::per_sample_loss(objective, model.forward(batch), batch, targets.narrow(0, start, rows)).sum();
    (loss / static_cast<double>(n)).backward();
    loss_sum += loss.item<double>();
  }
  return loss_sum / static_cast<double>(n);
}

double local_update(model::Network& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                    const LocalUpdateSettings& settings, at::Generator& generator) {
  const std::int64_t n = inputs.size(0);
  require_samples(n, targets.size(0), "local_update");
  model.train();
  torch::optim::Adam optimizer(model.parameters(), torch::optim::AdamOptions(settings.learning_rate));
  double epoch_loss = 0.0;
  for (int epoch = 0; epoch < settings.local_epochs; ++epoch) {
    const auto order = torch::randperm(n, generator, torch::kLong).to(inputs.device());
    epoch_loss = 0.0;
    std::int64_t batches = 0;
    for (std::int64_t start = 0; start < n; start += settings.batch_size, ++batches) {
      const auto batch = order.narrow(0, start, std::min<std::int64_t>(settings.batch_size, n - start));
      optimizer.zero_grad();
      const auto batch_inputs = inputs.index_select(0, batch);
      auto loss = model::mean_loss(settings.objective, model.forward(batch_inputs), batch_inputs,
                                   targets.index_select(0, batch));
      loss.backward();
      optimizer.step();
      epoch_loss += loss.item<double>();
    }
    epoch_loss /= static_cast<double>(batches);
  }
  return epoch_loss;
}

}  // namespace cflrun::run
