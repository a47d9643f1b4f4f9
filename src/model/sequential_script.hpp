#pragma once
// Private to src/model: the eval-mode TorchScript of a Sequential (Network::torchscript of an
// architecture built as one Sequential), for InferenceForward.

#include <string>

#include <torch/nn/modules/container/sequential.h>

namespace cflrun::model {

/// `def forward(self, x)` running `layers` in eval mode (BatchNorm on its running statistics,
/// Dropout as identity), each parameter or buffer read as the attribute named by its path under
/// `name` with '.' replaced by '_' (e.g. self.layers_0_weight for "layers.0.weight").
/// Handles Conv2d, BatchNorm2d, Linear, ReLU, MaxPool2d, Flatten and Dropout (the modules of
/// CifarCnn); returns "" if `layers` holds any other module (the caller then runs the eager
/// forward).
std::string sequential_torchscript(const torch::nn::Sequential& layers, const std::string& name);

}  // namespace cflrun::model
