// A classifier built as one Sequential whose last module is its head (CifarCnn, FedAvgCnn, Mlp).
#include <cflrun/model/architectures.hpp>

#include "sequential_script.hpp"

#include <cstddef>
#include <iterator>

namespace cflrun::model {

SequentialClassifier::SequentialClassifier(torch::nn::Sequential layers)
    : layers_(register_module("layers", std::move(layers))) {}

torch::Tensor SequentialClassifier::forward(const torch::Tensor& inputs) {
  return layers_->forward(inputs);
}

torch::Tensor SequentialClassifier::features(const torch::Tensor& inputs) {
  return run_layers(inputs, 0, layers_->size() - 1);
}

torch::Tensor SequentialClassifier::run_layers(torch::Tensor x, std::size_t first,
                                               std::size_t end) {
  const auto begin = layers_->begin();
  for (auto layer = std::next(begin, static_cast<std::ptrdiff_t>(first));
       layer != std::next(begin, static_cast<std::ptrdiff_t>(end)); ++layer) {
    x = layer->forward(x);
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
