// cflrun's CPU kernels against the LibTorch operations they replace: bit-identical outputs and
// gradients (cpu_kernels.hpp promises it), including ties, NaN, odd sizes and all-negative windows.
#include <cflrun/model/cpu_kernels.hpp>

#include <limits>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernel_setting.hpp"

#include <cflrun/core/error.hpp>

namespace cflrun::model {
namespace {

/// Output and input gradient of relu_max_pool2 (kernels on or off) for `x` and upstream `grad`.
std::pair<torch::Tensor, torch::Tensor> pooled(bool kernels, const torch::Tensor& x,
                                               const torch::Tensor& grad) {
  KernelSetting setting(kernels);
  const auto input = x.clone().requires_grad_();
  const auto out = relu_max_pool2(input);
  out.backward(grad);
  return {out.detach(), input.grad()};
}

void expect_identical(const torch::Tensor& x) {
  const auto grad = torch::randn({x.size(0), x.size(1), x.size(2) / 2, x.size(3) / 2});
  const auto [fused_out, fused_grad] = pooled(true, x, grad);
  const auto [torch_out, torch_grad] = pooled(false, x, grad);
  EXPECT_TRUE(torch::equal(fused_out.nan_to_num(7), torch_out.nan_to_num(7)))
      << (fused_out - torch_out).abs().nan_to_num(7).max().item<float>();
  EXPECT_EQ(fused_out.isnan().sum().item<std::int64_t>(),
            torch_out.isnan().sum().item<std::int64_t>());
  EXPECT_TRUE(torch::equal(fused_grad, torch_grad));
}

TEST(ReluMaxPool2, BitIdenticalToLibTorchOnConvOutputs) {
  torch::manual_seed(3);
  expect_identical(torch::randn({7, 6, 24, 24}));
  expect_identical(torch::randn({5, 16, 8, 8}));
}

TEST(ReluMaxPool2, TiesNanOddSizesAndNegativeWindows) {
  torch::manual_seed(4);
  // Values from {-1, 0, 1, 2}: every window has ties, some all <= 0.
  auto x = torch::randint(-1, 3, {3, 2, 9, 11}).to(torch::kFloat);
  x[0][0][0][0] = std::numeric_limits<float>::quiet_NaN();
  x[1][1][4][5] = std::numeric_limits<float>::quiet_NaN();
  x[2][0][3][3] = -std::numeric_limits<float>::infinity();
  expect_identical(x);
}

TEST(ReluMaxPool2, WithoutGradientAndOffTheFastPath) {
  torch::manual_seed(5);
  const auto x = torch::randn({4, 3, 10, 10});
  const auto reference = torch::relu(torch::max_pool2d(x, 2));
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(relu_max_pool2(x), reference));
  }
  // A non-contiguous input and float64 take LibTorch's operations: same values.
  EXPECT_TRUE(torch::equal(relu_max_pool2(x.transpose(2, 3)),
                           torch::relu(torch::max_pool2d(x.transpose(2, 3), 2))));
  EXPECT_TRUE(torch::equal(relu_max_pool2(x.to(torch::kDouble)),
                           torch::relu(torch::max_pool2d(x.to(torch::kDouble), 2))));
  EXPECT_THROW(relu_max_pool2(torch::zeros({2, 3, 4})), ShapeError);
  EXPECT_THROW(relu_max_pool2(torch::zeros({2, 3, 1, 4})), ShapeError);
}

}  // namespace
}  // namespace cflrun::model
