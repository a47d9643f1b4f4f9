#include <cflrun/model/inference_forward.hpp>

#include <algorithm>
#include <string>

#include <torch/csrc/jit/api/module.h>
#include <torch/types.h>

namespace cflrun::model {
namespace {

/// A TorchScript attribute name for a parameter or buffer path ("conv1.weight" -> "conv1_weight").
std::string attribute_name(std::string path) {
  std::replace(path.begin(), path.end(), '.', '_');
  return path;
}

std::unique_ptr<torch::jit::Module> freeze_for_inference(Network& network,
                                                         const std::string& script) {
  torch::jit::Module module("CflrunInference");
  for (const auto& parameter : network.named_parameters()) {
    module.register_parameter(attribute_name(parameter.key()), parameter.value().detach().clone(),
                              false);
  }
  for (const auto& buffer : network.named_buffers()) {
    module.register_buffer(attribute_name(buffer.key()), buffer.value().detach().clone());
  }
  module.define(script);
  module.eval();
  auto frozen = torch::jit::freeze(module);
  return std::make_unique<torch::jit::Module>(torch::jit::optimize_for_inference(frozen));
}

}  // namespace

InferenceForward::InferenceForward(Network& network) : network_(&network) {
  const auto script = network.torchscript();
  const bool on_cpu =
      network.parameters().empty() || network.parameters().front().device().is_cpu();
  if (!script.empty() && on_cpu && !network.runs_cpu_kernels()) {
    frozen_ = freeze_for_inference(network, script);
  }
}

InferenceForward::~InferenceForward() = default;
InferenceForward::InferenceForward(InferenceForward&&) noexcept = default;
InferenceForward& InferenceForward::operator=(InferenceForward&&) noexcept = default;

torch::Tensor InferenceForward::operator()(const torch::Tensor& inputs) {
  torch::InferenceMode inference;
  if (frozen_) {
    return frozen_->forward({inputs}).toTensor();
  }
  network_->eval();
  return network_->forward(inputs);
}

}  // namespace cflrun::model
