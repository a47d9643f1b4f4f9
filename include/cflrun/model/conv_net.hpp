#pragma once
/// @file
/// The small CNN the CLoVE paper uses for MNIST and Fashion-MNIST (App. B; official code
/// `GenConvNet`).

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cflrun/model/network.hpp>

namespace cflrun::model {

/// Conv2d(1,6,5) -> ReLU -> MaxPool 2 -> Conv2d(6,16,5) -> ReLU -> MaxPool 2 -> flatten (256)
/// -> Linear(256, num_classes). No hidden fully connected layer, no dropout: 5 142 parameters for
/// 10 classes (shared/papers/clove-official-setup.md Sec. 9).
class ConvNetImpl : public Network {
 public:
  /// @param num_classes  number of output logits (10 for MNIST and Fashion-MNIST).
  explicit ConvNetImpl(int num_classes = 10);

  /// @param images  [N, 1, 28, 28] float32 in [0, 1] (any memory format).
  /// @return        [N, num_classes] float32 logits.
  /// @throws c10::Error from LibTorch if the input shape is not [N, 1, 28, 28].
  torch::Tensor forward(const torch::Tensor& images) override;
  bool has_head() const override { return true; }
  /// @param images [N, 1, 28, 28]. @return [N, 256] the flattened output of the second pooling.
  torch::Tensor features(const torch::Tensor& images) override;
  /// @param features [N, 256]. @return [N, num_classes] logits of the final Linear.
  torch::Tensor head(const torch::Tensor& features) override;
  /// forward() as TorchScript (conv, ReLU, 2x2 max-pool twice, then the linear layer).
  std::string torchscript() const override;
  /// fused_kernels_enabled(): both layers run cpu_kernels.hpp's fused kernels, forward and
  /// backward.
  bool runs_cpu_kernels() const override;

  /// Side of the square max-pooling window after each convolution.
  static constexpr int kPoolSize = 2;

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc_;
};
TORCH_MODULE(ConvNet);

}  // namespace cflrun::model
