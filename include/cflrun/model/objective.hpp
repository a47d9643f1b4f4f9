#pragma once
/// @file
/// What a model is trained to do, and the per-sample loss that loss vectors, local updates and
/// metrics share (CLoVE Sec. 3: the empirical loss L_i(theta) = mean over a client's samples).

#include <string>

#include <torch/types.h>

namespace cflrun::model {

/// The learning task of a run.
enum class Objective {
  kClassification,  ///< cross-entropy on class logits; accuracy is measured (supervised tables).
  kRegression,      ///< squared error of a scalar prediction (mixed linear regression, App. C.1.1).
  kReconstruction,  ///< mean squared reconstruction error of the input (unsupervised, App. C.2,
                    ///< Table 5).
};

/// The name written to result files: "classification", "regression" or "reconstruction".
std::string objective_name(Objective objective);

/// Per-sample loss of a batch, in the official code's units (clove-official-setup.md Sec. 9, 11):
/// classification: -log softmax(outputs)[target] (nats); regression: (outputs[:, 0] - target)^2;
/// reconstruction: mean over the d features of (outputs - inputs flattened)^2 (nn.MSELoss per
/// sample).
/// @param outputs  [N, C] logits, [N, 1] predictions or [N, d] reconstructions (float32).
/// @param inputs   [N, ...] the batch that produced `outputs` (used by reconstruction only).
/// @param targets  [N] int64 class indices (classification) or float32 values (regression);
///                 ignored by reconstruction.
/// @return         [N] float32 losses.
/// @throws ShapeError if outputs and targets (or inputs) disagree in N, or a reconstruction does
///         not have as many features as the input.
torch::Tensor per_sample_loss(Objective objective, const torch::Tensor& outputs,
                              const torch::Tensor& inputs, const torch::Tensor& targets);

/// Mean of per_sample_loss over the batch, differentiable: the local training loss.
torch::Tensor mean_loss(Objective objective, const torch::Tensor& outputs,
                        const torch::Tensor& inputs, const torch::Tensor& targets);

/// Whether accuracy (arg-max logit == target) is defined for the objective (classification only).
bool has_accuracy(Objective objective);

}  // namespace cflrun::model
