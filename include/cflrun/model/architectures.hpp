#pragma once
/// @file
/// The models of the CLoVE paper's official code besides the small CNN (clove-official-setup.md
/// Sec. 9; CLoVE App. B) and IFCA's MLP (IFCA Sec. 6.2). Build them with make_network
/// (network.hpp). Only the convolutional classifiers (CifarCnn, FedAvgCnn) have a TorchScript form
/// for scoring: for the others the frozen module measured no faster than the eager forward
/// (tests/bench/inference_paths: mlp 0.5-0.7x, autoencoder 0.9x, conv_autoencoder 0.9-1.05x, linear
/// far slower for the cost of freezing), so they score eagerly.

#include <cstddef>
#include <cstdint>
#include <string>

#include <torch/nn/modules/container/sequential.h>

#include <cflrun/model/network.hpp>

namespace cflrun::model {

/// A classifier built as one torch::nn::Sequential, registered as the submodule "layers", whose
/// last module is its head (network.hpp's body/head split; PFLlib's BaseHeadSplit): CifarCnn,
/// FedAvgCnn and Mlp.
class SequentialClassifier : public Network {
 public:
  /// @param inputs [N, ...sample shape] float32. @return [N, C] logits, every module in order.
  torch::Tensor forward(const torch::Tensor& inputs) override;
  bool has_head() const override { return true; }
  /// @return [N, F] every module but the last, the head's input.
  torch::Tensor features(const torch::Tensor& inputs) override;
  /// @param features [N, F]. @return [N, C] the last module's logits.
  torch::Tensor head(const torch::Tensor& features) override;

 protected:
  /// Registers `layers` as "layers" (the parameter names and order of the flat state).
  explicit SequentialClassifier(torch::nn::Sequential layers);
  /// The layers' eval-mode forward as TorchScript, for the derived classes that score frozen.
  std::string layers_torchscript() const;
  /// The layers, for derived classes that run some of them another way.
  const torch::nn::Sequential& layers() const { return layers_; }
  /// `x` through the layers at positions [first, end) in order (first <= end <= the layers'
  /// count); its shape must fit layer `first`'s input, or LibTorch throws c10::Error.
  torch::Tensor run_layers(torch::Tensor x, std::size_t first, std::size_t end);

 private:
  torch::nn::Sequential layers_;
};

/// Cifar10CNN: four blocks Conv3x3(pad 1) -> BatchNorm2d -> ReLU -> MaxPool 2 with channels
/// 3 -> 64 -> 128 -> 256 -> 512 (32 -> 2 px), flatten 2 048 -> Linear 1 024 -> ReLU -> Dropout 0.5
/// -> Linear 512 -> ReLU -> Dropout 0.5 -> Linear C. 4 181 002 parameters and 1 920 BatchNorm
/// running statistics for C = 10 (the flat state holds both; the int64 batch counters are left
/// out).
/// Inputs [N, 3, 32, 32] float32; features [N, 512], the output of the second FC block (after its
/// dropout); the head is the final Linear(512, C).
class CifarCnn : public SequentialClassifier {
 public:
  explicit CifarCnn(int num_classes);
  /// The eval-mode forward as TorchScript, for InferenceForward (Network::torchscript): frozen, the
  /// convolutions fold in the BatchNorm statistics; measured 2.1x faster than the eager forward
  /// (tests/bench/inference_paths, 2 000 samples, 2 threads).
  std::string torchscript() const override { return layers_torchscript(); }
};

/// PFLlib's FedAvgCNN, the model its `-m CNN` builds for (F)MNIST and CIFAR-10 and so the model of
/// the CLoVE paper's PFLlib rows, Per-FedAvg, FedProto, FedALA and FedPAC (pfl-baselines-setup.md
/// Sec. 1; PFLlib system/flcore/trainmodel/models.py): Conv2d(c, 32, 5) -> ReLU -> MaxPool 2 ->
/// Conv2d(32, 64, 5) -> ReLU -> MaxPool 2 (stride 1, no padding) -> flatten dim -> Linear(dim, 512)
/// -> ReLU -> `fc` Linear(512, C). dim = 1 024 for [1, 28, 28] (28 -> 24 -> 12 -> 8 -> 4 px), 1 600
/// for [3, 32, 32] (32 -> 28 -> 14 -> 10 -> 5 px). The body/head split is PFLlib's BaseHeadSplit:
/// the head is `fc`, the features the 512 outputs of the hidden layer after its ReLU. 582 026
/// parameters for [1, 28, 28] and C = 10, 878 538 for [3, 32, 32].
/// Inputs [N, c, side, side] float32 (forward throws c10::Error from LibTorch if the shape does
/// not fit); features [N, 512], the hidden layer after its ReLU; the head is `fc`, Linear(512, C).
class FedAvgCnn : public SequentialClassifier {
 public:
  /// @param channels     c, input channels (1 for (F)MNIST, 3 for CIFAR-10).
  /// @param side         the input's height and width in pixels (28 or 32), at least 16.
  /// @param num_classes  C, output logits.
  FedAvgCnn(std::int64_t channels, std::int64_t side, int num_classes);
  /// @param inputs [N, c, side, side] float32. @return [N, C] logits: head(features(inputs)).
  torch::Tensor forward(const torch::Tensor& inputs) override;
  /// @return [N, 512]. On the CPU with cflrun's kernels (runs_cpu_kernels), the first block is
  /// conv5x5_relu_max_pool2 and the second LibTorch's convolution with relu_max_pool2
  /// (cpu_kernels.hpp): the same function, its floats equal to the layers' within float rounding
  /// (another summation order in the first convolution); otherwise every layer in order.
  torch::Tensor features(const torch::Tensor& inputs) override;
  /// Whether features() runs cflrun's CPU kernels: fused_kernels_enabled() and the parameters on
  /// the CPU.
  bool runs_cpu_kernels() const override;
  /// The eval-mode forward as TorchScript (the layers in order), for InferenceForward.
  std::string torchscript() const override { return layers_torchscript(); }

  /// Outputs of the hidden layer: the features' size.
  static constexpr std::int64_t kHidden = 512;
};

/// IFCA's MLP (IFCA Sec. 6.2, MNIST): flatten d -> Linear(d, 200) -> ReLU -> Linear(200, C), plain
/// logits. (The IFCA code returns log_softmax and applies CrossEntropyLoss on top, a double
/// log-softmax; cflrun uses the logits with cross-entropy, the paper's model.) 159 010 parameters
/// for d = 784, C = 10.
/// Inputs [N, ...] float32 with d features per sample; features [N, 200], the hidden layer after
/// its ReLU; the head is the final Linear(200, C).
class Mlp : public SequentialClassifier {
 public:
  Mlp(std::int64_t inputs, int num_classes);
};

/// The fully connected autoencoder of the MNIST/FMNIST rows (official `Autoencoder`, m = d / 4):
/// encoder d -> d -> d/2 -> m, decoder m -> d/2 -> d -> d, ReLU between the layers of each, sigmoid
/// output. 2 000 964 parameters for d = 784 (m = 196).
class Autoencoder : public Network {
 public:
  explicit Autoencoder(std::int64_t inputs);
  /// @param inputs [N, ...] float32 in [0, 1], d features. @return [N, d] reconstruction in (0, 1).
  torch::Tensor forward(const torch::Tensor& inputs) override;

 private:
  torch::nn::Sequential layers_;
};

/// The CIFAR-10 convolutional autoencoder (official `CIFAR10Autoencoder`): Conv(3->32->64->128,
/// 3x3, stride 2, pad 1) with ReLU (32 -> 4 px), flatten 2 048 -> Linear 128 latent -> Linear
/// 2 048 -> unflatten 128x4x4 -> ConvTranspose(128->64->32->3, 3x3, stride 2, pad 1, output pad 1)
/// with ReLU between and tanh output. As in the official code the targets are pixels in [0, 1]
/// while tanh ranges over [-1, 1].
class ConvAutoencoder : public Network {
 public:
  ConvAutoencoder();
  /// @param inputs [N, 3, 32, 32] float32 in [0, 1]. @return [N, 3 072] reconstruction in (-1, 1).
  torch::Tensor forward(const torch::Tensor& inputs) override;

 private:
  torch::nn::Sequential layers_;
};

/// The linear regression model of App. C.1.1: y = <theta, x>, Linear(d, 1) without bias.
class LinearModel : public Network {
 public:
  explicit LinearModel(std::int64_t inputs);
  /// @param inputs [N, d] float32. @return [N, 1] predictions.
  torch::Tensor forward(const torch::Tensor& inputs) override;

 private:
  torch::nn::Sequential layers_;
};

}  // namespace cflrun::model
