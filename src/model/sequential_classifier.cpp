// A classifier built as one Sequential whose last module is its head (CifarCnn, FedAvgCnn, Mlp).
#include <cflrun/model/architectures.hpp>

#include "sequential_script.hpp"

#include <iterator>

namespace cflrun::model {

SequentialClassifier::SequentialClassifier(torch::nn::Sequential layers)
    : layers_(register_module("layers", std::move(layers))) {}

torch::Tensor SequentialClassifier::forward(const torch::Tensor& inputs) {
  return layers_->forward(inputs);
}

torch::Tensor SequentialClassifier::features(const torch::Tensor& inputs) {
  auto x = inputs;
  for (auto module = layers_->begin(); module != std::prev(layers_->end()); ++module) {
    x = module->forward(x);
  }
  return x;
}

torch::Tensor SequentialClassifier::head(const torch::Tensor& features) {
  return std::prev(layers_->end())->forward(features);
}

std::string SequentialClassifier::layers_torchscript() const {
  return sequential_torchscript(layers_, "layers");
}

}  // namespace cflrun::model
