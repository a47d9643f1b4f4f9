#include <cflrun/model/architectures.hpp>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

namespace cflrun::model {
namespace {

/// Linear layers through `widths` with ReLU between them (none after the last).
void add_linear_chain(torch::nn::Sequential& layers, const std::vector<std::int64_t>& widths) {
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    layers->push_back(torch::nn::Linear(widths[i], widths[i + 1]));
    if (i + 2 < widths.size()) {
      layers->push_back(torch::nn::ReLU());
    }
  }
}

torch::nn::Conv2dOptions down(std::int64_t in, std::int64_t out) {
  return torch::nn::Conv2dOptions(in, out, 3).stride(2).padding(1);
}

torch::nn::ConvTranspose2dOptions up(std::int64_t in, std::int64_t out) {
  return torch::nn::ConvTranspose2dOptions(in, out, 3).stride(2).padding(1).output_padding(1);
}

}  // namespace

Autoencoder::Autoencoder(std::int64_t inputs) {
  torch::nn::Sequential layers;
  layers->push_back(torch::nn::Flatten());
  const std::int64_t d = inputs;
  add_linear_chain(layers, {d, d, d / 2, d / 4});
  torch::nn::Sequential decoder;
  add_linear_chain(decoder, {d / 4, d / 2, d, d});
  decoder->push_back(torch::nn::Sigmoid());
  layers->extend(*decoder);
  layers_ = register_module("layers", layers);
}

torch::Tensor Autoencoder::forward(const torch::Tensor& inputs) { return layers_->forward(inputs); }

ConvAutoencoder::ConvAutoencoder() {
  torch::nn::Sequential layers(
      torch::nn::Conv2d(down(3, 32)), torch::nn::ReLU(), torch::nn::Conv2d(down(32, 64)),
      torch::nn::ReLU(), torch::nn::Conv2d(down(64, 128)), torch::nn::ReLU(), torch::nn::Flatten(),
      torch::nn::Linear(2048, 128), torch::nn::Linear(128, 2048),
      torch::nn::Unflatten(torch::nn::UnflattenOptions(1, {128, 4, 4})),
      torch::nn::ConvTranspose2d(up(128, 64)), torch::nn::ReLU(),
      torch::nn::ConvTranspose2d(up(64, 32)), torch::nn::ReLU(),
      torch::nn::ConvTranspose2d(up(32, 3)), torch::nn::Tanh(), torch::nn::Flatten());
  layers_ = register_module("layers", layers);
}

torch::Tensor ConvAutoencoder::forward(const torch::Tensor& inputs) {
  return layers_->forward(inputs);
}

}  // namespace cflrun::model
