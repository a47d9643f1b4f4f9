#include "sequential_script.hpp"

#include <iomanip>
#include <optional>
#include <sstream>
#include <variant>
#include <string>
#include <vector>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cflrun/model/dropout.hpp>

namespace cflrun::model {
namespace {

std::string list(c10::ArrayRef<std::int64_t> values) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    out << (i > 0 ? ", " : "") << values[i];
  }
  out << ']';
  return out.str();
}

/// Explicit integer padding of a convolution, or nothing for "valid"/"same" (not scripted).
std::optional<std::string> explicit_padding(const torch::nn::detail::ConvNdOptions<2>& options) {
  if (const auto* padding = std::get_if<torch::ExpandingArray<2>>(&options.padding())) {
    return list(*padding);
  }
  return std::nullopt;
}

/// A float literal that reads back as exactly `value` (std::to_string keeps 6 decimals only).
std::string exact(double value) {
  std::ostringstream out;
  out << std::setprecision(17) << value;
  return out.str();
}

std::string bias_of(const std::string& self, const torch::Tensor& bias) {
  return bias.defined() ? self + "_bias" : "None";
}

/// The script line applying `module` to x, "" for an identity in eval mode, nothing if unknown.
std::optional<std::string> line_for(const torch::nn::Module& module, const std::string& self) {
  if (const auto* conv = module.as<torch::nn::Conv2d>()) {
    const auto padding = explicit_padding(conv->options);
    if (!padding) {
      return std::nullopt;
    }
    return "x = torch.conv2d(x, " + self + "_weight, " + bias_of(self, conv->bias) + ", " +
           list(conv->options.stride()) + ", " + *padding + ", " + list(conv->options.dilation()) +
           ", " + std::to_string(conv->options.groups()) + ")";
  }
  if (const auto* norm = module.as<torch::nn::BatchNorm2d>()) {
    if (!norm->options.affine() || !norm->options.track_running_stats()) {
      return std::nullopt;
    }
    return "x = torch.batch_norm(x, " + self + "_weight, " + self + "_bias, " + self +
           "_running_mean, " + self + "_running_var, False, 0.0, " + exact(norm->options.eps()) +
           ", False)";
  }
  if (const auto* linear = module.as<torch::nn::Linear>()) {
    return "x = torch.linear(x, " + self + "_weight, " + bias_of(self, linear->bias) + ")";
  }
  if (const auto* pool = module.as<torch::nn::MaxPool2d>()) {
    const auto& o = pool->options;
    return "x = torch.max_pool2d(x, " + list(o.kernel_size()) + ", " + list(o.stride()) + ", " +
           list(o.padding()) + ", " + list(o.dilation()) + ", " +
           (o.ceil_mode() ? "True" : "False") + ")";
  }
  if (const auto* flatten = module.as<torch::nn::Flatten>()) {
    return "x = torch.flatten(x, " + std::to_string(flatten->options.start_dim()) + ", " +
           std::to_string(flatten->options.end_dim()) + ")";
  }
  if (module.as<torch::nn::ReLU>() != nullptr) {
    return std::string("x = torch.relu(x)");
  }
  if (module.as<DropoutImpl>() != nullptr) {
    return std::string();
  }
  return std::nullopt;
}

}  // namespace

std::string sequential_torchscript(const torch::nn::Sequential& layers, const std::string& name) {
  std::string script = "\ndef forward(self, x):\n";
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const auto line = line_for(*layers->ptr(i), "self." + name + "_" + std::to_string(i));
    if (!line) {
      return "";
    }
    if (!line->empty()) {
      script += "    " + *line + "\n";
    }
  }
  return script + "    return x\n";
}

}  // namespace cflrun::model
