// Client-batched execution of a model: stacked parameters, batched matrix products and grouped
// convolutions (include/cflrun/model/client_batched.hpp).
#include <cflrun/model/client_batched.hpp>

#include "batched_layers.hpp"

#include <algorithm>
#include <iterator>

#include <ATen/Context.h>
#include <torch/csrc/autograd/autograd.h>
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

torch::Tensor stacked(const torch::Tensor& parameter, std::int64_t g) {
  return parameter.narrow(0, 0, g);
}

torch::Tensor bias_of(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer,
                      std::int64_t g) {
  return layer.bias ? stacked(parameters[layer.parameter + 1], g).reshape({-1}) : torch::Tensor();
}

torch::Tensor linear(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer,
                     const torch::Tensor& x) {
  const auto g = x.size(0);
  const auto weight = stacked(parameters[layer.parameter], g).transpose(1, 2);  // [g, in, out]
  if (!layer.bias) {
    return torch::bmm(x, weight);
  }
  return torch::baddbmm(stacked(parameters[layer.parameter + 1], g).unsqueeze(1), x, weight);
}

torch::Tensor convolution(const std::vector<torch::Tensor>& parameters, const BatchedLayer& layer,
                          const torch::Tensor& x, std::int64_t g) {
  const auto& w =
      parameters[layer.parameter];  // [G, out, in, k, k] (transposed: [G, in, out, k, k])
  const auto weight = stacked(w, g).reshape({g * w.size(1), w.size(2), w.size(3), w.size(4)});
  if (layer.kind == Kind::kConvTranspose) {
    return torch::conv_transpose2d(x, weight, bias_of(parameters, layer, g), layer.stride,
                                   layer.padding, layer.output_padding, g);
  }
  return torch::conv2d(x, weight, bias_of(parameters, layer, g), layer.stride, layer.padding,
                       {1, 1}, g);
}

/// The float buffers of `reference` in flat-state order (batch norm's running mean and variance).
std::vector<torch::Tensor> float_buffers(const Network& reference) {
  std::vector<torch::Tensor> buffers;
  for (const auto& buffer : reference.buffers()) {
    if (buffer.is_floating_point()) {
      buffers.push_back(buffer);
    }
  }
  return buffers;
}

/// Whether the layers account for every float buffer: two per batch norm, nothing else.
bool buffers_covered(const Network& reference, const std::vector<BatchedLayer>& layers) {
  const auto norms = std::count_if(layers.begin(), layers.end(), [](const BatchedLayer& layer) {
    return layer.kind == Kind::kBatchNorm;
  });
  return float_buffers(reference).size() == 2 * static_cast<std::size_t>(norms);
}

/// [G, ...shape] zeros of `dtype` on `device` for each of `tensors`.
std::vector<torch::Tensor> stacked_like(const std::vector<torch::Tensor>& tensors, int capacity,
                                        torch::Device device, torch::ScalarType dtype) {
  std::vector<torch::Tensor> stacks;
  for (const auto& tensor : tensors) {
    std::vector<std::int64_t> shape{capacity};
    shape.insert(shape.end(), tensor.sizes().begin(), tensor.sizes().end());
    stacks.push_back(torch::zeros(shape, torch::TensorOptions(device).dtype(dtype)));
  }
  return stacks;
}

/// Training-mode batch norm over the rows marked valid only ([g, B] 1/0): each client's channel
/// mean and biased variance over its real rows and all pixels; its running averages move towards
/// them (unbiased variance), as BatchNorm2d would over that client's real batch alone.
torch::Tensor masked_batch_norm(const torch::Tensor& x, const torch::Tensor& valid,
                                const torch::Tensor& weight, const torch::Tensor& bias,
                                torch::Tensor& running_mean, torch::Tensor& running_var,
                                const BatchedLayer& layer, std::int64_t g) {
  const auto b = x.size(0);
  const auto channels = x.size(1) / g;
  const auto x5 = x.view({b, g, channels, x.size(2), x.size(3)});
  const auto mask = valid.t().reshape({b, g, 1, 1, 1}).to(x.dtype());
  const auto count = (valid.sum(1) * static_cast<double>(x.size(2) * x.size(3)))
                         .to(x.dtype())
                         .unsqueeze(1);                  // [g, 1]
  const auto mean = (x5 * mask).sum({0, 3, 4}) / count;  // [g, C]
  const auto centred = x5 - mean.view({1, g, channels, 1, 1});
  const auto variance = (centred.square() * mask).sum({0, 3, 4}) / count;
  {
    torch::NoGradGuard no_grad;
    running_mean.mul_(1.0 - layer.momentum).add_(mean.detach().reshape({-1}), layer.momentum);
    running_var.mul_(1.0 - layer.momentum)
        .add_((variance.detach() * count / (count - 1.0)).reshape({-1}), layer.momentum);
  }
  const auto scale = (torch::rsqrt(variance + layer.eps) * weight.view({g, channels}))
                         .view({1, g, channels, 1, 1});
  return (centred * scale + bias.view({1, g, channels, 1, 1})).view(x.sizes());
}

}  // namespace

ClientBatchedNetwork::ClientBatchedNetwork(const Network& reference, int capacity,
                                           torch::Device device)
    : capacity_(capacity),
      state_size_(flat_state_size(reference)),
      layers_(batched_layers(reference)),
      has_head_(reference.has_head() && !layers_.empty() && layers_.back().kind == Kind::kLinear) {
  if (capacity < 1) {
    throw ConfigError("--client-batch must be at least 1, but got " + std::to_string(capacity));
  }
  if (!buffers_covered(reference, layers_)) {
    throw ConfigError(
        "this model keeps buffers other than batch norm's; it has no client-batched form "
        "(use --client-batch 1)");
  }
  const auto dtype = reference.parameters().front().scalar_type();
  parameters_ = stacked_like(reference.parameters(), capacity, device, dtype);
  for (auto& parameter : parameters_) {
    parameter.requires_grad_();
  }
  buffers_ = stacked_like(float_buffers(reference), capacity, device, dtype);
}

bool ClientBatchedNetwork::supports(const Network& reference) {
  try {
    return buffers_covered(reference, batched_layers(reference));
  } catch (const ConfigError&) {
    return false;
  }
}

std::vector<BatchedLayer> ClientBatchedNetwork::dropout_layers() const {
  std::vector<BatchedLayer> dropouts;
  std::copy_if(layers_.begin(), layers_.end(), std::back_inserter(dropouts),
               [](const BatchedLayer& layer) { return layer.kind == Kind::kDropout; });
  return dropouts;
}

void ClientBatchedNetwork::load(const torch::Tensor& states) {
  if (states.dim() != 2 || states.size(0) < 1 || states.size(0) > capacity_ ||
      states.size(1) != state_size_) {
    throw ShapeError("ClientBatchedNetwork::load: expected [g, " + std::to_string(state_size_) +
                     "] states with 1 <= g <= " + std::to_string(capacity_) + ", but got " +
                     c10::str(states.sizes()));
  }
  torch::NoGradGuard no_grad;
  const auto g = states.size(0);
  const auto on_device = states.to(parameters_.front().device(), dtype());
  std::int64_t offset = 0;
  for (auto* stacks : {&parameters_, &buffers_}) {
    for (auto& stack : *stacks) {
      auto rows = stacked(stack, g);
      const auto floats = rows.numel() / g;
      rows.copy_(on_device.narrow(1, offset, floats).view(rows.sizes()));
      offset += floats;
    }
  }
}

torch::Tensor ClientBatchedNetwork::states(int g) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  for (const auto* stacks : {&parameters_, &buffers_}) {
    for (const auto& stack : *stacks) {
      pieces.push_back(stacked(stack, g).reshape({g, -1}));
    }
  }
  return torch::cat(pieces, 1).to(torch::kCPU);
}

torch::Tensor ClientBatchedNetwork::gradients(int g) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  for (const auto& parameter : parameters_) {
    const auto& grad = parameter.grad();
    pieces.push_back(grad.defined()
                         ? stacked(grad, g).reshape({g, -1})
                         : torch::zeros({g, parameter.numel() / capacity_}, parameter.options()));
  }
  for (const auto& buffer : buffers_) {  // no gradient, as model::flatten_gradients
    pieces.push_back(torch::zeros({g, buffer.numel() / capacity_}, buffer.options()));
  }
  return torch::cat(pieces, 1).to(torch::kCPU);
}

void ClientBatchedNetwork::set_gradients(const torch::Tensor& loss) {
  const auto gradients = torch::autograd::grad({loss}, parameters_, /*grad_outputs=*/{},
                                               /*retain_graph=*/false, /*create_graph=*/false,
                                               /*allow_unused=*/true);
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    parameters_[i].mutable_grad() = gradients[i];
  }
}

void ClientBatchedNetwork::zero_grad() {
  for (auto& parameter : parameters_) {
    parameter.mutable_grad() = torch::Tensor();
  }
}

torch::Tensor ClientBatchedNetwork::batch_norm(const BatchedLayer& layer, const torch::Tensor& x,
                                               std::int64_t g, const BatchedPass& pass) {
  const auto weight = stacked(parameters_[layer.parameter], g).reshape({-1});
  const auto bias = stacked(parameters_[layer.parameter + 1], g).reshape({-1});
  auto mean = stacked(buffers_[layer.buffer], g).view({-1});  // views: updated in place
  auto var = stacked(buffers_[layer.buffer + 1], g).view({-1});
  if (pass.training && pass.valid.defined()) {
    return masked_batch_norm(x, pass.valid, weight, bias, mean, var, layer, g);
  }
  return torch::batch_norm(x, weight, bias, mean, var, pass.training, layer.momentum, layer.eps,
                           at::globalContext().userEnabledCuDNN());
}

torch::Tensor ClientBatchedNetwork::dropout(const torch::Tensor& x, std::size_t index,
                                            const BatchedPass& pass) const {
  if (!pass.training) {
    return x;
  }
  if (index >= pass.dropout_masks.size() || !pass.dropout_masks[index].sizes().equals(x.sizes())) {
    throw ShapeError("ClientBatchedNetwork::forward: a training pass needs a " +
                     c10::str(x.sizes()) + " mask for dropout layer " + std::to_string(index));
  }
  return x * pass.dropout_masks[index];
}

torch::Tensor ClientBatchedNetwork::forward(const torch::Tensor& inputs, const BatchedPass& pass) {
  return run_layers(inputs, pass, layers_.size());
}

const BatchedLayer& ClientBatchedNetwork::head_layer() const {
  if (!has_head_) {
    throw ConfigError(
        "this model has no body/head split (a classifier: --model cnn, fedavg_cnn, cifar_cnn or "
        "mlp)");
  }
  return layers_.back();
}

torch::Tensor ClientBatchedNetwork::features(const torch::Tensor& inputs, const BatchedPass& pass) {
  head_layer();
  return run_layers(inputs, pass, layers_.size() - 1);
}

torch::Tensor ClientBatchedNetwork::head(const torch::Tensor& features) {
  return linear(parameters_, head_layer(), features);
}

std::vector<std::size_t> ClientBatchedNetwork::head_parameters() const {
  const auto& head = head_layer();
  return head.bias ? std::vector<std::size_t>{head.parameter, head.parameter + 1}
                   : std::vector<std::size_t>{head.parameter};
}

torch::Tensor ClientBatchedNetwork::run_layers(const torch::Tensor& inputs, const BatchedPass& pass,
                                               std::size_t end) {
  const auto g = inputs.size(0);
  if (g < 1 || g > capacity_) {
    throw ShapeError("ClientBatchedNetwork::forward: inputs for " + std::to_string(g) +
                     " clients, but it holds " + std::to_string(capacity_));
  }
  torch::Tensor x = inputs;
  bool channels = false;  // x is [B, g * C, H, W] (else [g, B, ...])
  std::size_t dropouts = 0;
  for (std::size_t l = 0; l < end; ++l) {
    const auto& layer = layers_[l];
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
      case Kind::kBatchNorm:
        x = batch_norm(layer, channels ? x : to_channels(x), g, pass);
        channels = true;
        break;
      case Kind::kDropout:
        x = dropout(x, dropouts++, pass);
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
