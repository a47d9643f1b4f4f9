#include <cflrun/run/source_holdouts.hpp>

#include <limits>

#include <torch/torch.h>

namespace cflrun::run {
namespace {

constexpr std::int64_t kChunk = 256;  // rows per forward pass, as ClientGroup's evaluation

}  // namespace

SourceHoldouts::SourceHoldouts(const data::ClientData& data, model::Objective objective, torch::Device device)
    : objective_(objective) {
  for (int s = 0; s < data.num_sources(); ++s) {
    const auto holdout = data.holdout(s);
    inputs_.push_back(holdout.inputs.to(device));
    targets_.push_back(holdout.targets.to(device));
  }
}

SourceScores SourceHoldouts::evaluate(ModelSet& models) const {
  SourceScores scores;
  for (int j = 0; j < models.size(); ++j) {
    auto& model = models.load(j);
    model.eval();
    torch::InferenceMode inference;
    for (int s = 0; s < size(); ++s) {
      const auto n = inputs_[s].size(0);
      double loss = 0.0;
      double correct = 0.0;
      for (std::int64_t start = 0; start < n; start += kChunk) {
        const auto inputs = inputs_[s].narrow(0, start, std::min(kChunk, n - start));
        const auto targets = targets_[s].narrow(0, start, inputs.size(0));
        const auto outputs = model.forward(inputs);
        loss += model::per_sample_loss(objective_, outputs, inputs, targets).sum().item<double>();
        if (model::has_accuracy(objective_)) {
          correct += outputs.argmax(/*dim=*/1).eq(targets).sum().item<double>();
        }
      }
      const auto nan = std::numeric_limits<float>::quiet_NaN();
      scores.accuracy.push_back(model::has_accuracy(objective_) ? static_cast<float>(correct / n) : nan);
      scores.loss.push_back(static_cast<float>(loss / n));
    }
  }
  return scores;
}

}  // namespace cflrun::run
