#include <cflrun/model/architectures.hpp>

#include "sequential_script.hpp"

#include "sequential_split.hpp"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

namespace cflrun::model {
namespace {

constexpr double kDropout = 0.5;

void add_block(torch::nn::Sequential& layers, std::int64_t in, std::int64_t out) {
  layers->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
  layers->push_back(torch::nn::BatchNorm2d(out));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::MaxPool2d(2));
}

}  // namespace

CifarCnn::CifarCnn(int num_classes) {
  torch::nn::Sequential layers;
  add_block(layers, 3, 64);
  add_block(layers, 64, 128);
  add_block(layers, 128, 256);
  add_block(layers, 256, 512);
  layers->push_back(torch::nn::Flatten());
  layers->push_back(torch::nn::Linear(2048, 1024));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::Dropout(kDropout));
  layers->push_back(torch::nn::Linear(1024, 512));
  layers->push_back(torch::nn::ReLU());
  layers->push_back(torch::nn::Dropout(kDropout));
  layers->push_back(torch::nn::Linear(512, num_classes));
  layers_ = register_module("layers", layers);
}

torch::Tensor CifarCnn::forward(const torch::Tensor& inputs) { return layers_->forward(inputs); }

std::string CifarCnn::torchscript() const { return sequential_torchscript(layers_, "layers"); }

torch::Tensor CifarCnn::features(const torch::Tensor& inputs) {
  return sequential_body(layers_, inputs);
}

torch::Tensor CifarCnn::head(const torch::Tensor& features) {
  return sequential_head(layers_, features);
}

}  // namespace cflrun::model
