#include <cflrun/model/dropout.hpp>

#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>

namespace cflrun::model {

DropoutImpl::DropoutImpl(double probability) : probability_(probability) {
  if (!(probability >= 0.0 && probability < 1.0)) {
    throw ConfigError("dropout probability " + std::to_string(probability) +
                      " is outside [0, 1); give a probability of zeroing a unit below 1");
  }
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  return is_training() ? dropout(x, probability_, generator_) : x;
}

torch::Tensor dropout(const torch::Tensor& x, double p,
                      const std::optional<at::Generator>& generator) {
  if (!generator || p == 0.0 || x.numel() == 0) {
    return torch::dropout(x, p, /*train=*/true);
  }
  // The op sequence of LibTorch's CPU torch::dropout (ATen/native/Dropout.cpp), with `generator`.
  auto noise = at::empty_like(x);
  noise.bernoulli_(1.0 - p, *generator);
  noise.div_(1.0 - p);
  return x * noise;
}

std::optional<at::Generator> dropout_generator(std::uint64_t seed, torch::Device device) {
  if (device.is_cpu()) {
    return at::detail::createCPUGenerator(seed);
  }
  torch::manual_seed(seed);
  return std::nullopt;
}

void set_dropout_generator(torch::nn::Module& module,
                           const std::optional<at::Generator>& generator) {
  for (const auto& child : module.modules(/*include_self=*/true)) {
    if (auto* layer = child->as<DropoutImpl>()) {
      layer->set_generator(generator);
    }
  }
}

}  // namespace cflrun::model
