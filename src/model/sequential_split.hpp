#pragma once
// Private to src/model: the body/head split of a classifier built as one Sequential whose last
// module is its head (CifarCnn, Mlp).
#include <iterator>

#include <torch/nn/modules/container/sequential.h>

namespace cflrun::model {

/// Runs every module of `layers` but the last on `x`, in order (the body).
inline torch::Tensor sequential_body(torch::nn::Sequential& layers, torch::Tensor x) {
  for (auto module = layers->begin(); module != std::prev(layers->end()); ++module) {
    x = module->forward(x);
  }
  return x;
}

/// Runs the last module of `layers` (the head).
inline torch::Tensor sequential_head(torch::nn::Sequential& layers, const torch::Tensor& features) {
  return std::prev(layers->end())->forward(features);
}

}  // namespace cflrun::model
