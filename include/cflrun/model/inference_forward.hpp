#pragma once
/// @file
/// The forward pass of a model for scoring only (loss vectors, test metrics), on LibTorch's
/// optimised inference path.

#include <memory>

#include <torch/types.h>

#include <cflrun/model/network.hpp>

namespace torch::jit {
struct Module;
}

namespace cflrun::model {

/// A Network's forward pass for inference. On the CPU, for an architecture that has a TorchScript
/// form (Network::torchscript), it runs a frozen TorchScript module built from the network's
/// current parameters: torch::jit::freeze folds them in as constants and optimize_for_inference
/// prepacks the convolution and linear weights for oneDNN and fuses convolution with ReLU. It
/// measured 3-6x faster than the eager forward on the paper's CNN (1 thread, 256-sample batches).
/// Otherwise (CUDA, no script, or a network that runs cflrun's own CPU kernels,
/// Network::runs_cpu_kernels: the cnn's eager forward with them measured 1.9x faster than the
/// frozen module, 1 thread, 100-1000-sample batches) it is the eager forward in eval mode without
/// gradients. Results equal the eager forward's to float rounding (different kernels sum in a
/// different order).
///
/// A frozen module is built from the parameters at construction (about 2-7 ms for the CNN) and
/// does not see later changes of `network`; the eager forward does. Build a new one whenever the
/// network's parameters change, so that both agree.
class InferenceForward {
 public:
  /// @param network  the model to run; must outlive this object when no frozen module is used.
  /// @throws c10::Error from LibTorch if the network's script does not compile (a bug).
  explicit InferenceForward(Network& network);
  ~InferenceForward();
  InferenceForward(InferenceForward&&) noexcept;
  InferenceForward& operator=(InferenceForward&&) noexcept;

  /// @param inputs  [N, ...sample_shape] float32 on the network's device.
  /// @return        what Network::forward returns for `inputs`, computed without gradients.
  torch::Tensor operator()(const torch::Tensor& inputs);

  /// True if a frozen TorchScript module runs the forward pass.
  bool frozen() const { return frozen_ != nullptr; }

 private:
  Network* network_;
  std::unique_ptr<torch::jit::Module> frozen_;
};

}  // namespace cflrun::model
