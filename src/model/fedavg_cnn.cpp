#include <cflrun/model/architectures.hpp>

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

/// The layers of FedAvgCnn, in order.
torch::nn::Sequential fedavg_cnn_layers(std::int64_t channels, std::int64_t side, int num_classes) {
  const auto pooled = pooled_side(side);
  torch::nn::Sequential layers;
  add_block(layers, channels, kConv1Channels);
  add_block(layers, kConv1Channels, kConv2Channels);
  layers->push_back(torch::nn::Flatten());
  layers->push_back(
      torch::nn::Linear(kConv2Channels * pooled * pooled, FedAvgCnn::kHidden));  // PFLlib's fc1
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::Linear(FedAvgCnn::kHidden, num_classes));  // PFLlib's fc, the head
  return layers;
}

}  // namespace

FedAvgCnn::FedAvgCnn(std::int64_t channels, std::int64_t side, int num_classes)
    : SequentialClassifier(fedavg_cnn_layers(channels, side, num_classes)) {}

}  // namespace cflrun::model
