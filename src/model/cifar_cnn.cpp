#include <cflrun/model/architectures.hpp>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cflrun/model/dropout.hpp>

namespace cflrun::model {
namespace {

constexpr double kDropout = 0.5;

void add_block(torch::nn::Sequential& layers, std::int64_t in, std::int64_t out) {
  layers->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
  layers->push_back(torch::nn::BatchNorm2d(out));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::MaxPool2d(2));
}

/// The layers of CifarCnn, in order.
torch::nn::Sequential cifar_layers(int num_classes) {
  torch::nn::Sequential layers;
  add_block(layers, 3, 64);
  add_block(layers, 64, 128);
  add_block(layers, 128, 256);
  add_block(layers, 256, 512);
  layers->push_back(torch::nn::Flatten());
  layers->push_back(torch::nn::Linear(2048, 1024));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(Dropout(kDropout));
  layers->push_back(torch::nn::Linear(1024, 512));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(Dropout(kDropout));
  layers->push_back(torch::nn::Linear(512, num_classes));
  return layers;
}

}  // namespace

CifarCnn::CifarCnn(int num_classes) : SequentialClassifier(cifar_layers(num_classes)) {}

}  // namespace cflrun::model
