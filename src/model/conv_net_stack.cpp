#include <cflrun/model/conv_net_stack.hpp>

#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::model {

ConvNetStack::ConvNetStack(const std::vector<ConvNet>& models) : size_(static_cast<int>(models.size())) {
  if (models.empty()) {
    throw ShapeError("ConvNetStack: needs at least one model, but got none");
  }
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> conv1_weights;
  std::vector<torch::Tensor> conv1_biases;
  for (const auto& m : models) {
    conv1_weights.push_back(m->conv1()->weight.detach());
    conv1_biases.push_back(m->conv1()->bias.detach());
    conv2_weight_.push_back(m->conv2()->weight.detach());
    conv2_bias_.push_back(m->conv2()->bias.detach());
    fc_weight_.push_back(m->fc()->weight.detach());
    fc_bias_.push_back(m->fc()->bias.detach());
  }
  conv1_weight_ = torch::cat(conv1_weights);
  conv1_bias_ = torch::cat(conv1_biases);
  channels_per_model_ = models.front()->conv1()->weight.size(0);
}

torch::Tensor ConvNetStack::per_sample_losses(const torch::Tensor& images, const torch::Tensor& targets) const {
  torch::InferenceMode inference;
  constexpr int kPool = ConvNetImpl::kPoolSize;
  // conv1 of every model at once: the input is read and unfolded once; channels
  // [k * c, (k + 1) * c) belong to model k.
  const auto first = torch::max_pool2d(torch::relu(torch::conv2d(images, conv1_weight_, conv1_bias_)), kPool);
  std::vector<torch::Tensor> losses;
  for (int k = 0; k < size_; ++k) {
    const auto own = first.narrow(/*dim=*/1, k * channels_per_model_, channels_per_model_);
    const auto at = static_cast<std::size_t>(k);
    const auto second = torch::max_pool2d(torch::relu(torch::conv2d(own, conv2_weight_[at], conv2_bias_[at])), kPool);
    const auto logits = torch::linear(second.flatten(/*start_dim=*/1), fc_weight_[at], fc_bias_[at]);
    losses.push_back(torch::nn::functional::cross_entropy(
        logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)));
  }
  return torch::stack(losses, /*dim=*/1);
}

}  // namespace cflrun::model
