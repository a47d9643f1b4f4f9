#pragma once
/// @file
/// K ConvNets evaluated side by side in one pass: the loss-vector phase of CLoVE (Alg. 1 lines 5-7)
/// runs every client's data through all K models, and stacking the models lets the input be read
/// and unfolded once per layer instead of K times.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/model/conv_net.hpp>

namespace cflrun::model {

/// K ConvNets whose first convolution runs as one convolution with 6K output channels, so the
/// input images are read and unfolded once rather than K times; conv2 and the linear layer then
/// run per model on that model's 6 channels. Measured with 1 thread on jobs/fmnist_label_skew1.cfg
/// (loss-vector phase per round, best of 4 runs): 1.80 s against 1.97 s for K separate forward
/// passes; stacking conv2 as a grouped convolution (K groups) as well was slower than either.
/// Mathematically identical to running each model separately; floating-point sums may differ in
/// the last bits. The stack shares the models' conv2 and linear parameters (no copy): load new
/// states into those models only after the stack is no longer used.
class ConvNetStack {
 public:
  /// Copies the parameters of `models` (all ConvNets of the same number of classes, any device).
  /// @throws ShapeError if `models` is empty.
  explicit ConvNetStack(const std::vector<ConvNet>& models);

  /// Number K of stacked models.
  int size() const { return size_; }

  /// Per-sample cross-entropy of every model, in eval mode, without gradients.
  /// @param images   [N, 1, 28, 28] float32 on the models' device.
  /// @param targets  [N] int64 class indices.
  /// @return         [N, K] float32: entry [n, k] = -log softmax(model_k(images[n]))[targets[n]].
  torch::Tensor per_sample_losses(const torch::Tensor& images, const torch::Tensor& targets) const;

 private:
  int size_ = 0;
  std::int64_t channels_per_model_ = 0;  // conv1 output channels of one model (6)
  torch::Tensor conv1_weight_;           // [6K, 1, 5, 5]
  torch::Tensor conv1_bias_;             // [6K]
  std::vector<torch::Tensor> conv2_weight_;  // K x [16, 6, 5, 5]
  std::vector<torch::Tensor> conv2_bias_;    // K x [16]
  std::vector<torch::Tensor> fc_weight_;     // K x [C, 256]
  std::vector<torch::Tensor> fc_bias_;       // K x [C]
};

}  // namespace cflrun::model
