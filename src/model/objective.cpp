#include <cflrun/model/objective.hpp>

#include <string>

#include <torch/nn/functional/loss.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/model_registry.hpp>

namespace cflrun::model {
namespace {

void require_same_rows(const torch::Tensor& outputs, const torch::Tensor& other, const char* what) {
  if (outputs.dim() != 2 || other.dim() < 1 || outputs.size(0) != other.size(0)) {
    throw ShapeError("per_sample_loss: outputs of shape " + c10::str(outputs.sizes()) +
                     " do not fit " + what + " of shape " + c10::str(other.sizes()) +
                     " (expected [N, outputs] and [N, ...])");
  }
}

torch::Tensor reconstruction_error(const torch::Tensor& outputs, const torch::Tensor& inputs) {
  const auto flat = inputs.flatten(/*start_dim=*/1);
  if (flat.size(1) != outputs.size(1)) {
    throw ShapeError("per_sample_loss: a reconstruction of " + std::to_string(outputs.size(1)) +
                     " features for inputs of " + std::to_string(flat.size(1)) +
                     " features; use an autoencoder model (--model " +
                     reconstruction_model_names() + ") that fits the dataset");
  }
  return (outputs - flat).pow(2).mean(/*dim=*/1);
}

}  // namespace

std::string objective_name(Objective objective) {
  switch (objective) {
    case Objective::kClassification:
      return "classification";
    case Objective::kRegression:
      return "regression";
    case Objective::kReconstruction:
      return "reconstruction";
  }
  return "unknown";
}

torch::Tensor per_sample_loss(Objective objective, const torch::Tensor& outputs,
                              const torch::Tensor& inputs, const torch::Tensor& targets) {
  switch (objective) {
    case Objective::kClassification:
      require_same_rows(outputs, targets, "targets");
      return torch::nn::functional::cross_entropy(
          outputs, targets,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    case Objective::kRegression:
      require_same_rows(outputs, targets, "targets");
      return (outputs.select(/*dim=*/1, 0) - targets.to(outputs.scalar_type())).pow(2);
    case Objective::kReconstruction:
      require_same_rows(outputs, inputs, "inputs");
      return reconstruction_error(outputs, inputs);
  }
  throw ShapeError("per_sample_loss: unknown objective");
}

torch::Tensor mean_loss(Objective objective, const torch::Tensor& outputs,
                        const torch::Tensor& inputs, const torch::Tensor& targets) {
  return per_sample_loss(objective, outputs, inputs, targets).mean();
}

bool has_accuracy(Objective objective) { return objective == Objective::kClassification; }

}  // namespace cflrun::model
