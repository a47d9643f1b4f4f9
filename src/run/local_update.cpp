#include <cflrun/run/local_update.hpp>

#include <string>

#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::run {

double local_update(model::ConvNet& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                    const LocalUpdateSettings& settings, at::Generator& generator) {
  const std::int64_t n = inputs.size(0);
  if (n == 0 || targets.size(0) != n) {
    throw ShapeError("local_update: expected n > 0 inputs with n targets, but got " +
                     std::to_string(n) + " inputs and " + std::to_string(targets.size(0)) + " targets");
  }
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(settings.learning_rate));
  double epoch_loss = 0.0;
  for (int epoch = 0; epoch < settings.local_epochs; ++epoch) {
    const auto order = torch::randperm(n, generator, torch::kLong).to(inputs.device());
    epoch_loss = 0.0;
    std::int64_t batches = 0;
    for (std::int64_t start = 0; start < n; start += settings.batch_size, ++batches) {
      const auto batch = order.narrow(0, start, std::min<std::int64_t>(settings.batch_size, n - start));
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(inputs.index_select(0, batch)),
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
