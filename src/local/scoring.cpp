#include <cflrun/local/scoring.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/inference_forward.hpp>

namespace cflrun::local {

void add_scores(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
                const torch::Tensor& targets, const torch::Tensor& owner, const torch::Tensor& rows,
                torch::Tensor& loss_sums, torch::Tensor& correct_sums) {
  model::InferenceForward forward(model);
  torch::InferenceMode inference;
  const auto rows_per_pass = eval_chunk(inputs.device());
  for (std::int64_t start = 0; start < rows.size(0); start += rows_per_pass) {
    const auto chunk = rows.narrow(0, start, std::min(rows_per_pass, rows.size(0) - start));
    const auto chunk_inputs = inputs.index_select(0, chunk);
    const auto outputs = forward(chunk_inputs);
    const auto chunk_targets = targets.index_select(0, chunk);
    const auto chunk_owner = owner.index_select(0, chunk);
    loss_sums.index_add_(0, chunk_owner,
                         model::per_sample_loss(objective, outputs, chunk_inputs, chunk_targets)
                             .to(torch::kFloat64));
    if (model::has_accuracy(objective)) {
      correct_sums.index_add_(0, chunk_owner,
                              outputs.argmax(/*dim=*/1).eq(chunk_targets).to(torch::kFloat64));
    }
  }
}

Score score(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
            const torch::Tensor& targets) {
  const auto n = inputs.size(0);
  if (n == 0 || targets.size(0) != n) {
    throw ShapeError("score: expected n > 0 inputs with n targets, but got " + std::to_string(n) +
                     " and " + std::to_string(targets.size(0)));
  }
  const auto options = torch::TensorOptions(inputs.device()).dtype(torch::kFloat64);
  auto loss = torch::zeros({1}, options);
  auto correct = torch::zeros({1}, options);
  const auto longs = torch::TensorOptions(inputs.device()).dtype(torch::kLong);
  add_scores(model, objective, inputs, targets, torch::zeros({n}, longs), torch::arange(n, longs),
             loss, correct);
  model.train();
  const double count = static_cast<double>(n);
  return {model::has_accuracy(objective) ? correct.item<double>() / count
                                         : std::numeric_limits<double>::quiet_NaN(),
          loss.item<double>() / count};
}

}  // namespace cflrun::local
