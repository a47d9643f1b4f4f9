#include "scores.hpp"

#include <algorithm>

#include <torch/torch.h>

namespace cflrun::run {

void add_scores(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
                const torch::Tensor& targets, const torch::Tensor& owner, const torch::Tensor& rows,
                torch::Tensor& loss_sums, torch::Tensor& correct_sums) {
  model.eval();
  torch::InferenceMode inference;
  for (std::int64_t start = 0; start < rows.size(0); start += kEvalChunk) {
    const auto chunk = rows.narrow(0, start, std::min(kEvalChunk, rows.size(0) - start));
    const auto chunk_inputs = inputs.index_select(0, chunk);
    const auto outputs = model.forward(chunk_inputs);
    const auto chunk_targets = targets.index_select(0, chunk);
    const auto chunk_owner = owner.index_select(0, chunk);
    loss_sums.index_add_(0, chunk_owner,
                         model::per_sample_loss(objective, outputs, chunk_inputs, chunk_targets).to(torch::kFloat64));
    if (model::has_accuracy(objective)) {
      correct_sums.index_add_(0, chunk_owner, outputs.argmax(/*dim=*/1).eq(chunk_targets).to(torch::kFloat64));
    }
  }
}

}  // namespace cflrun::run
