#include "batched_layers.hpp"

#include <string>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/conv_net.hpp>
#include <cflrun/model/dropout.hpp>

namespace cflrun::model {
namespace {

using Kind = BatchedLayer::Kind;

/// Where the next layer's tensors lie in the flat state: its parameters, its float buffers.
struct Slots {
  std::size_t parameter = 0;
  std::size_t buffer = 0;
};

std::vector<std::int64_t> pair(const torch::ExpandingArray<2>& values) {
  return {(*values)[0], (*values)[1]};
}

BatchedLayer weighted(Kind kind, Slots& slots, const torch::Tensor& bias) {
  BatchedLayer layer;
  layer.kind = kind;
  layer.parameter = slots.parameter;
  layer.bias = bias.defined();
  slots.parameter += layer.bias ? 2 : 1;
  return layer;
}

/// A 2-d convolution or transposed convolution (their options share ConvNdOptions<2>).
BatchedLayer convolution(Kind kind, const torch::nn::detail::ConvNdOptions<2>& options,
                         const torch::Tensor& bias, Slots& slots) {
  const auto* padding = std::get_if<torch::ExpandingArray<2>>(&options.padding());
  if (padding == nullptr || options.groups() != 1 ||
      pair(options.dilation()) != std::vector<std::int64_t>{1, 1}) {
    throw ConfigError(
        "a convolution with named padding, groups or dilation has no client-batched form");
  }
  auto layer = weighted(kind, slots, bias);
  layer.stride = pair(options.stride());
  layer.padding = pair(*padding);
  layer.output_padding = pair(options.output_padding());
  return layer;
}

BatchedLayer plain(Kind kind) {
  BatchedLayer layer;
  layer.kind = kind;
  return layer;
}

/// Batch norm with learned scale and shift and running averages of a fixed momentum.
BatchedLayer batch_norm(const torch::nn::BatchNorm2dImpl& norm, Slots& slots) {
  const auto& options = norm.options;
  if (!options.affine() || !options.track_running_stats() || !options.momentum().has_value()) {
    throw ConfigError(
        "a batch norm without affine parameters, running averages or a fixed momentum has no "
        "client-batched form");
  }
  auto layer = weighted(Kind::kBatchNorm, slots, norm.bias);
  layer.eps = options.eps();
  layer.momentum = *options.momentum();
  layer.buffer = slots.buffer;
  slots.buffer += 2;  // running mean, running variance (num_batches_tracked is no float)
  return layer;
}

BatchedLayer layer_of(const torch::nn::Module& module, Slots& slots) {
  if (const auto* linear = module.as<torch::nn::Linear>()) {
    auto layer = weighted(Kind::kLinear, slots, linear->bias);
    layer.features = linear->options.out_features();
    return layer;
  }
  if (const auto* conv = module.as<torch::nn::Conv2d>()) {
    return convolution(Kind::kConv, conv->options, conv->bias, slots);
  }
  if (const auto* conv = module.as<torch::nn::ConvTranspose2d>()) {
    return convolution(Kind::kConvTranspose, conv->options, conv->bias, slots);
  }
  if (const auto* norm = module.as<torch::nn::BatchNorm2d>()) {
    return batch_norm(*norm, slots);
  }
  if (const auto* dropout = module.as<DropoutImpl>()) {
    auto layer = plain(Kind::kDropout);
    layer.probability = dropout->probability();
    return layer;
  }
  if (const auto* pool = module.as<torch::nn::MaxPool2d>()) {
    const auto window = pair(pool->options.kernel_size());
    if (window[0] != window[1] || pair(pool->options.stride()) != window ||
        pair(pool->options.padding()) != std::vector<std::int64_t>{0, 0}) {
      throw ConfigError(
          "a max-pooling other than square, stride = window, no padding has no client-batched "
          "form");
    }
    auto layer = plain(Kind::kMaxPool);
    layer.window = window[0];
    return layer;
  }
  if (const auto* unflatten = module.as<torch::nn::Unflatten>()) {
    auto layer = plain(Kind::kUnflatten);
    layer.sizes = unflatten->options.sizes();
    return layer;
  }
  if (module.as<torch::nn::Flatten>() != nullptr) {
    return plain(Kind::kFlatten);
  }
  if (module.as<torch::nn::ReLU>() != nullptr) {
    return plain(Kind::kRelu);
  }
  if (module.as<torch::nn::Sigmoid>() != nullptr) {
    return plain(Kind::kSigmoid);
  }
  if (module.as<torch::nn::Tanh>() != nullptr) {
    return plain(Kind::kTanh);
  }
  throw ConfigError("layer " + module.name() + " has no client-batched form");
}

/// ConvNetImpl::features then head: conv, pool, ReLU twice, flatten, linear.
std::vector<BatchedLayer> conv_net_layers(const ConvNetImpl& net) {
  Slots slots;
  std::vector<BatchedLayer> layers;
  for (const auto& child : net.children()) {
    if (const auto* conv = child->as<torch::nn::Conv2d>()) {
      layers.push_back(convolution(Kind::kConv, conv->options, conv->bias, slots));
      auto pool = plain(Kind::kMaxPool);
      pool.window = ConvNetImpl::kPoolSize;
      layers.push_back(pool);
      layers.push_back(plain(Kind::kRelu));
    } else {
      layers.push_back(plain(Kind::kFlatten));
      layers.push_back(layer_of(*child, slots));
    }
  }
  return layers;
}

/// A dropout layer masks the outputs of the linear layer before it (the units it zeroes).
void size_dropouts(std::vector<BatchedLayer>& layers) {
  std::int64_t features = 0;
  for (auto& layer : layers) {
    if (layer.kind == Kind::kLinear) {
      features = layer.features;
    } else if (layer.kind == Kind::kDropout) {
      if (features == 0) {
        throw ConfigError("a dropout before any linear layer has no client-batched form");
      }
      layer.features = features;
    } else if (layer.kind != Kind::kRelu && layer.kind != Kind::kSigmoid &&
               layer.kind != Kind::kTanh) {
      features = 0;
    }
  }
}

}  // namespace

std::vector<BatchedLayer> batched_layers(const Network& reference) {
  if (const auto* net = dynamic_cast<const ConvNetImpl*>(&reference)) {
    return conv_net_layers(*net);
  }
  const auto children = reference.named_children();
  const auto* found = children.find("layers");
  const auto* sequential = found != nullptr ? (*found)->as<torch::nn::Sequential>() : nullptr;
  if (sequential == nullptr) {
    throw ConfigError("this model has no client-batched form");
  }
  Slots slots;
  std::vector<BatchedLayer> layers;
  for (const auto& child : sequential->children()) {
    layers.push_back(layer_of(*child, slots));
  }
  size_dropouts(layers);
  return layers;
}

}  // namespace cflrun::model
