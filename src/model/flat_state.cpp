#include <cflrun/model/flat_state.hpp>

#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::model {
namespace {

/// Parameters, then floating-point buffers, of the module and all its submodules.
std::vector<torch::Tensor> state_tensors(const torch::nn::Module& module) {
  std::vector<torch::Tensor> tensors = module.parameters(/*recurse=*/true);
  for (const auto& buffer : module.buffers(/*recurse=*/true)) {
    if (buffer.is_floating_point()) {
      tensors.push_back(buffer);
    }
  }
  return tensors;
}

}  // namespace

FlatRange trailing_layers(const torch::nn::Module& module, int layers) {
  std::vector<std::string> layer_names;    // distinct module paths, in parameter order
  std::vector<std::int64_t> layer_starts;  // flat offset of each layer's first parameter
  std::int64_t offset = 0;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const auto& name = item.key();
    const auto layer = name.substr(0, name.rfind('.'));
    if (layer_names.empty() || layer_names.back() != layer) {
      layer_names.push_back(layer);
      layer_starts.push_back(offset);
    }
    offset += item.value().numel();
  }
  const auto count = static_cast<int>(layer_names.size());
  if (layers < 1 || layers >= count) {
    throw ConfigError("--cluster-layers must be between 1 and " + std::to_string(count - 1) +
                      " (the model has " + std::to_string(count) +
                      " layers; at least one must be shared), but got " + std::to_string(layers));
  }
  const std::int64_t start = layer_starts[static_cast<std::size_t>(count - layers)];
  return {start, offset - start};
}

std::int64_t flat_state_size(const torch::nn::Module& module) {
  std::int64_t size = 0;
  for (const auto& tensor : state_tensors(module)) {
    size += tensor.numel();
  }
  return size;
}

torch::Tensor flatten_state(const torch::nn::Module& module, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  for (const auto& tensor : state_tensors(module)) {
    pieces.push_back(tensor.detach().to(torch::kCPU, dtype).reshape({-1}));
  }
  return torch::cat(pieces);
}

torch::Tensor flatten_gradients(const torch::nn::Module& module, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  const auto parameters = module.parameters(/*recurse=*/true);
  for (const auto& p : parameters) {
    const auto& grad = p.grad();
    pieces.push_back(grad.defined() ? grad.detach().to(torch::kCPU, dtype).reshape({-1})
                                    : torch::zeros({p.numel()}, dtype));
  }
  const auto buffers = flat_state_size(module) - torch::cat(pieces).numel();
  pieces.push_back(torch::zeros({buffers}, dtype));
  return torch::cat(pieces);
}

void load_flat_state(torch::nn::Module& module, const torch::Tensor& flat) {
  const std::int64_t expected = flat_state_size(module);
  if (flat.dim() != 1 || flat.numel() != expected) {
    throw ShapeError("load_flat_state: expected a 1-D tensor of " + std::to_string(expected) +
                     " floats (the model's flat state size), but got shape " +
                     c10::str(flat.sizes()));
  }
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& tensor : state_tensors(module)) {
    const std::int64_t n = tensor.numel();
    tensor.copy_(flat.narrow(/*dim=*/0, offset, n).view(tensor.sizes()));
    offset += n;
  }
}

}  // namespace cflrun::model
