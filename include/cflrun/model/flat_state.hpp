#pragma once
/// @file
/// A model's state as one contiguous buffer, so that one MPI call moves a whole model.

#include <cstdint>

#include <torch/nn/module.h>

namespace cflrun::model {

/// Number of floats in the flat state of `module`: all parameters, then all floating-point
/// buffers (e.g. BatchNorm running statistics), in registration order. The official CLoVE code
/// averages the complete state_dict, buffers included (clove-official-setup.md Sec. 10).
std::int64_t flat_state_size(const torch::nn::Module& module);

/// Copies the state of `module` into a new [P] CPU tensor of `dtype` (float32 unless asked; P =
/// flat_state_size). Parameters in any memory format (e.g. channels-last) are read in their
/// logical order.
torch::Tensor flatten_state(const torch::nn::Module& module,
                            torch::ScalarType dtype = torch::kFloat32);

/// The parameters' gradients in the flat-state layout: [P] CPU of `dtype`, zeros for parameters
/// without a gradient and for buffers (they are not trained by gradients).
torch::Tensor flatten_gradients(const torch::nn::Module& module,
                                torch::ScalarType dtype = torch::kFloat32);

/// A contiguous range [offset, offset + size) of a flat state.
struct FlatRange {
  std::int64_t offset = 0;
  std::int64_t size = 0;
};

/// Where the parameters of the last `layers` layers of `module` lie in its flat state (a layer =
/// the parameters sharing a module path, e.g. "fc.weight" and "fc.bias"): the per-cluster part of
/// IFCA's weight sharing (IFCA Sec. 4.1), all earlier layers and every buffer being shared.
/// @throws ConfigError naming --cluster-layers unless 1 <= layers < number of layers.
FlatRange trailing_layers(const torch::nn::Module& module, int layers);

/// Copies a flat state back into `module`'s parameters and buffers in place (no autograd record).
/// @param flat  [P] float tensor on any device, P = flat_state_size(module).
/// @throws ShapeError if `flat` is not 1-D with exactly P elements.
void load_flat_state(torch::nn::Module& module, const torch::Tensor& flat);

}  // namespace cflrun::model
