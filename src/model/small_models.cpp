#include <cflrun/model/architectures.hpp>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

namespace cflrun::model {
namespace {
constexpr std::int64_t kMlpHidden = 200;  // IFCA Sec. 6.2
}  // namespace

Mlp::Mlp(std::int64_t inputs, int num_classes)
    : SequentialClassifier(
          torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(inputs, kMlpHidden),
                                torch::nn::ReLU(), torch::nn::Linear(kMlpHidden, num_classes))) {}

LinearModel::LinearModel(std::int64_t inputs)
    : layers_(register_module(
          "layers", torch::nn::Sequential(
                        torch::nn::Flatten(),
                        torch::nn::Linear(torch::nn::LinearOptions(inputs, 1).bias(false))))) {}

torch::Tensor LinearModel::forward(const torch::Tensor& inputs) { return layers_->forward(inputs); }

}  // namespace cflrun::model
