#include <cflrun/model/architectures.hpp>

#include "sequential_script.hpp"
#include "sequential_split.hpp"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

namespace cflrun::model {
namespace {

constexpr std::int64_t kKernel = 5;  // both convolutions: 5x5, stride 1, no padding
constexpr std::int64_t kPool = 2;    // MaxPool2d((2, 2)), stride = window
constexpr std::int64_t kConv1Channels = 32;
constexpr std::int64_t kConv2Channels = 64;

/// The side of the second pooling's output for an input of `side` pixels.
std::int64_t pooled_side(std::int64_t side) {
  return ((side - kKernel + 1) / kPool - kKernel + 1) / kPool;
}

void add_block(torch::nn::Sequential& layers, std::int64_t in, std::int64_t out) {
  layers->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kKernel)));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::MaxPool2d(kPool));
}

}  // namespace

FedAvgCnn::FedAvgCnn(std::int64_t channels, std::int64_t side, int num_classes) {
  const auto pooled = pooled_side(side);
  torch::nn::Sequential layers;
  add_block(layers, channels, kConv1Channels);
  add_block(layers, kConv1Channels, kConv2Channels);
  layers->push_back(torch::nn::Flatten());
  layers->push_back(torch::nn::Linear(kConv2Channels * pooled * pooled, kHidden));  // PFLlib's fc1
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::Linear(kHidden, num_classes));  // PFLlib's fc, the head
  layers_ = register_module("layers", layers);
}

torch::Tensor FedAvgCnn::forward(const torch::Tensor& inputs) { return layers_->forward(inputs); }

std::string FedAvgCnn::torchscript() const { return sequential_torchscript(layers_, "layers"); }

torch::Tensor FedAvgCnn::features(const torch::Tensor& inputs) {
  return sequential_body(layers_, inputs);
}

torch::Tensor FedAvgCnn::head(const torch::Tensor& features) {
  return sequential_head(layers_, features);
}

}  // namespace cflrun::model
