#include <cflrun/model/conv_net.hpp>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/pooling.h>

#include <cflrun/model/cpu_kernels.hpp>

namespace cflrun::model {
namespace {
constexpr int kKernel = 5;
constexpr int kConv1Channels = 6;
constexpr int kConv2Channels = 16;
constexpr int kFlatFeatures = kConv2Channels * 4 * 4;
}  // namespace

ConvNetImpl::ConvNetImpl(int num_classes)
    : conv1_(register_module(
          "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, kConv1Channels, kKernel)))),
      conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(
                                          kConv1Channels, kConv2Channels, kKernel)))),
      fc_(register_module("fc", torch::nn::Linear(kFlatFeatures, num_classes))) {}

torch::Tensor ConvNetImpl::forward(const torch::Tensor& images) { return head(features(images)); }

torch::Tensor ConvNetImpl::features(const torch::Tensor& images) {
  // relu(max_pool(x)) == max_pool(relu(x)) exactly (ReLU is monotone), with a quarter of the ReLU
  // work and of its backward pass; the gradient differs only where a window ties at its maximum.
  // On the CPU each layer runs as one fused kernel with its ReLU and pooling (cpu_kernels.hpp).
  static_assert(kPoolSize == 2 && kKernel == 5, "the fused kernels take 5x5 kernels, 2x2 pools");
  auto x = conv5x5_relu_max_pool2(images, conv1_->weight, conv1_->bias);
  x = conv5x5_relu_max_pool2(x, conv2_->weight, conv2_->bias);
  return x.flatten(/*start_dim=*/1);
}

bool ConvNetImpl::runs_cpu_kernels() const { return fused_kernels_enabled(); }

torch::Tensor ConvNetImpl::head(const torch::Tensor& features) { return fc_->forward(features); }

std::string ConvNetImpl::torchscript() const {
  static_assert(kPoolSize == 2, "the script pools 2x2");
  return R"(
def forward(self, x):
    x = torch.max_pool2d(torch.relu(torch.conv2d(x, self.conv1_weight, self.conv1_bias)), 2)
    x = torch.max_pool2d(torch.relu(torch.conv2d(x, self.conv2_weight, self.conv2_bias)), 2)
    return torch.linear(torch.flatten(x, 1), self.fc_weight, self.fc_bias)
)";
}

}  // namespace cflrun::model
