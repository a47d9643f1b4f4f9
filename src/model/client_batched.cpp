// Client-batched execution of a model: stacked parameters, batched matrix products and grouped
// convolutions (include/cflrun/model/client_batched.hpp).
#include <cflrun/model/client_batched.hpp>

#include "batched_layers.hpp"

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::model {
namespace {

using Kind = BatchedLayer::Kind;

/// [g, B, C, H, W] samples -> the clients' channels side by side, [B, g * C, H, W].
torch::Tensor to_channels(const torch::Tensor& x) {
  const auto g = x.size(0);
  const auto b = x.size(1);
  return x.transpose(0, 1).reshape({b, g * x.size(2), x.size(3), x.size(4)});
}

/// [B, g * C, H, W] -> [g, B, C * H * W], each client's sample flattened as flatten(1) would.
torch::Tensor channels_to_rows(const torch::Tensor& x, std::int64_t g) {
  return x.reshape({x.size(0), g, -1}).transpose(0, 1);
}

torch::Tensor stacked(const torch::Tensor& parameter, std::int64_t g) { return parameter.narrow(0, 0, g); }

torch::Tensor bias_of(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer, std::int64_t g) {
  return layer.bias ? stacked(parameters[layer.parameter + 1], g).reshape({-1}) : torch::Tensor();
}

torch::Tensor linear(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer, const torch::Tensor& x) {
  const auto g = x.size(0);
  const auto weight = stacked(parameters[layer.parameter], g).transpose(1, 2);  // [g, in, out]
  if (!layer.bias) {
    return torch::bmm(x, weight);
  }
  return torch::baddbmm(stacked(parameters[layer.parameter + 1], g).unsqueeze(1), x, weight);
}

torch::Tensor convolution(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer,
                          const torch::Tensor& x, std::int64_t g) {
  const auto& w = parameters[layer.parameter];  // [G, out, in, k, k] (transposed: [G, in, out, k, k])
  const auto weight = stacked(w, g).reshape({g * w.size(1), w.size(2), w.size(3), w.size(4)});
  if (layer.kind == Kind::kConvTranspose) {
    return torch::conv_transpose2d(x, weight, bias_of(parameters, layer, g), layer.stride, layer.padding,
                                   layer.output_padding, g);
  }
  return torch::conv2d(x, weight, bias_of(parameters, layer, g), layer.stride, layer.padding, {1, 1}, g);
}

/// Whether the flat state holds parameters only: buffers (batch-norm statistics) have no
/// client-batched form.
bool parameters_only(const Network& reference) {
  std::int64_t floats = 0;
  for (const auto& parameter : reference.parameters()) {
    floats += parameter.numel();
  }
  return floats == flat_state_size(reference);
}

}  // namespace

ClientBatchedNetwork::ClientBatchedNetwork(const Network& reference, int capacity, torch::Device device)
    : capacity_(capacity), state_size_(flat_state_size(reference)), layers_(batched_layers(reference)) {
  if (capacity < 1) {
    throw ConfigError("--client-batch must be at least 1, but got " + std::to_string(capacity));
  }
  if (!parameters_only(reference)) {
    throw ConfigError("this model keeps buffers; it has no client-batched form (use --client-batch 1)");
  }
  for (const auto& parameter : reference.parameters()) {
    std::vector<std::int64_t> shape{capacity};
    shape.insert(shape.end(), parameter.sizes().begin(), parameter.sizes().end());
    parameters_.push_back(torch::zeros(shape, torch::TensorOptions(device).dtype(torch::kFloat32)).requires_grad_());
  }
}

bool ClientBatchedNetwork::supports(const Network& reference) {
  try {
    batched_layers(reference);
    return parameters_only(reference);
  } catch (const ConfigError&) {
    return false;
  }
}

void ClientBatchedNetwork::load(const torch::Tensor& states) {
  if (states.dim() != 2 || states.size(0) < 1 || states.size(0) > capacity_ || states.size(1) != state_size_) {
    throw ShapeError("ClientBatchedNetwork::load: expected [g, " + std::to_string(state_size_) + "] states with 1 <= g <= " +
                     std::to_string(capacity_) + ", but got " + c10::str(states.sizes()));
  }
  torch::NoGradGuard no_grad;
  const auto g = states.size(0);
  const auto on_device = states.to(parameters_.front().device(), torch::kFloat32);
  std::int64_t offset = 0;
  for (auto& parameter : parameters_) {
    auto rows = stacked(parameter, g);
    const auto floats = rows.numel() / g;
    rows.copy_(on_device.narrow(1, offset, floats).view(rows.sizes()));
    offset += floats;
  }
}

torch::Tensor ClientBatchedNetwork::states(int g) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  for (const auto& parameter : parameters_) {
    pieces.push_back(stacked(parameter, g).reshape({g, -1}));
  }
  return torch::cat(pieces, 1).to(torch::kCPU);
}

torch::Tensor ClientBatchedNetwork::gradients(int g) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  for (const auto& parameter : parameters_) {
    const auto& grad = parameter.grad();
    pieces.push_back(grad.defined() ? stacked(grad, g).reshape({g, -1})
                                    : torch::zeros({g, parameter.numel() / capacity_}, parameter.options()));
  }
  return torch::cat(pieces, 1).to(torch::kCPU);
}

void ClientBatchedNetwork::zero_grad() {
  for (auto& parameter : parameters_) {
    parameter.mutable_grad() = torch::Tensor();
  }
}

torch::Tensor ClientBatchedNetwork::forward(const torch::Tensor& inputs) const {
  const auto g = inputs.size(0);
  if (g < 1 || g > capacity_) {
    throw ShapeError("ClientBatchedNetwork::forward: inputs for " + std::to_string(g) + " clients, but it holds " +
                     std::to_string(capacity_));
  }
  torch::Tensor x = inputs;
  bool channels = false;  // x is [B, g * C, H, W] (else [g, B, ...])
  for (const auto& layer : layers_) {
    switch (layer.kind) {
      case Kind::kFlatten:
        x = channels ? channels_to_rows(x, g) : x.flatten(2);
        channels = false;
        break;
      case Kind::kUnflatten: {
        std::vector<std::int64_t> shape{g, x.size(1)};
        shape.insert(shape.end(), layer.sizes.begin(), layer.sizes.end());
        x = to_channels(x.reshape(shape));
        channels = true;
        break;
      }
      case Kind::kLinear:
        x = linear(parameters_, layer, x);
        break;
      case Kind::kConv:
      case Kind::kConvTranspose:
        x = convolution(parameters_, layer, channels ? x : to_channels(x), g);
        channels = true;
        break;
      case Kind::kRelu:
        x = torch::relu(x);
        break;
      case Kind::kSigmoid:
        x = torch::sigmoid(x);
        break;
      case Kind::kTanh:
        x = torch::tanh(x);
        break;
      case Kind::kMaxPool:
        x = torch::max_pool2d(x, layer.window);
        break;
    }
  }
  return channels ? channels_to_rows(x, g) : x;
}

}  // namespace cflrun::model
