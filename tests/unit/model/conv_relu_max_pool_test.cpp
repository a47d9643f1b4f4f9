// conv5x5_relu_max_pool2 against LibTorch's conv2d + relu + max_pool2d: outputs and input, weight
// and bias gradients equal within float rounding for the paper's shapes and awkward ones (channel
// counts off the vector blocks, odd sizes, planes wider than a vector block), the same floats for
// every thread count, and LibTorch's path where the kernel does not apply.
#include <cflrun/model/cpu_kernels.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "kernel_setting.hpp"

namespace cflrun::model {
namespace {

struct ConvResult {
  torch::Tensor out, grad_input, grad_weight, grad_bias;
};

/// The layer's output and gradients for the output gradient `grad`; grad_input only if
/// `input_gradient` (the input needs one, as a network's second layer's does).
ConvResult convolved(bool kernels, const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias, const torch::Tensor& grad,
                     bool input_gradient = true) {
  KernelSetting setting(kernels);
  const auto input = x.clone().requires_grad_(input_gradient);
  const auto w = weight.clone().requires_grad_();
  const auto b = bias.clone().requires_grad_();
  const auto out = conv5x5_relu_max_pool2(input, w, b);
  out.backward(grad);
  return {out.detach(), input.grad(), w.grad(), b.grad()};
}

/// max |a - b| / max |b|: the error relative to the tensor's scale.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

struct Shape {
  std::int64_t samples, in_channels, out_channels, height, width;
};

void expect_close_to_libtorch(const Shape& s, bool input_gradient = true) {
  SCOPED_TRACE(testing::Message() << s.samples << " x " << s.in_channels << " -> " << s.out_channels
                                  << ", " << s.height << " x " << s.width);
  torch::manual_seed(3);
  const auto x = torch::randn({s.samples, s.in_channels, s.height, s.width});
  const auto weight = torch::randn({s.out_channels, s.in_channels, 5, 5}) * 0.2;
  const auto bias = torch::randn({s.out_channels}) * 0.1;
  const auto grad =
      torch::randn({s.samples, s.out_channels, (s.height - 4) / 2, (s.width - 4) / 2});
  const auto fused = convolved(true, x, weight, bias, grad, input_gradient);
  const auto reference = convolved(false, x, weight, bias, grad, input_gradient);
  ASSERT_EQ(fused.out.sizes(), reference.out.sizes());
  EXPECT_LT(relative_error(fused.out, reference.out), 1e-5);
  ASSERT_EQ(fused.grad_input.defined(), input_gradient);
  if (input_gradient) {
    EXPECT_LT(relative_error(fused.grad_input, reference.grad_input), 1e-5);
  }
  EXPECT_LT(relative_error(fused.grad_weight, reference.grad_weight), 1e-5);
  EXPECT_LT(relative_error(fused.grad_bias, reference.grad_bias), 1e-5);
}

TEST(ConvReluMaxPool2, CloseToLibTorchOnThePaperShapes) {
  expect_close_to_libtorch({100, 1, 6, 28, 28}, false);  // the cnn's first layer
  expect_close_to_libtorch({17, 6, 16, 12, 12});         // its second layer's shape
  expect_close_to_libtorch({5, 32, 64, 12, 12});         // fedavg_cnn's second layer
  expect_close_to_libtorch({9, 3, 6, 32, 32});           // a CIFAR-sized input
}

TEST(ConvReluMaxPool2, CloseToLibTorchOnAwkwardShapes) {
  expect_close_to_libtorch({1, 1, 1, 6, 6});     // the smallest input, one channel
  expect_close_to_libtorch({5, 2, 7, 9, 11});    // odd sizes, 7 channels (6 + 1 per block)
  expect_close_to_libtorch({3, 1, 13, 7, 30});   // odd pooled rows and columns
  expect_close_to_libtorch({2, 1, 4, 40, 100});  // a plane wider than a vector block
}

TEST(ConvReluMaxPool2, SameFloatsOnOneAndTwoThreads) {
  torch::manual_seed(4);
  const auto x = torch::randn({37, 1, 28, 28});
  const auto weight = torch::randn({6, 1, 5, 5}) * 0.2;
  const auto bias = torch::randn({6}) * 0.1;
  const auto grad = torch::randn({37, 6, 12, 12});
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  const auto one = convolved(true, x, weight, bias, grad);
  torch::set_num_threads(2);
  const auto two = convolved(true, x, weight, bias, grad);
  torch::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one.out, two.out));
  EXPECT_TRUE(torch::equal(one.grad_input, two.grad_input));
  EXPECT_TRUE(torch::equal(one.grad_weight, two.grad_weight));
  EXPECT_TRUE(torch::equal(one.grad_bias, two.grad_bias));
}

TEST(ConvReluMaxPool2, OtherKernelsAndTypesGoToLibTorch) {
  torch::manual_seed(5);
  KernelSetting on(true);
  const auto weight = torch::randn({4, 2, 5, 5});
  const auto bias = torch::randn({4});
  // a 3 x 3 kernel and a double input: LibTorch, bit for bit its own result
  const auto small = torch::randn({4, 2, 3, 3});
  const auto y = torch::randn({3, 2, 12, 12});
  EXPECT_TRUE(torch::equal(conv5x5_relu_max_pool2(y, small, bias),
                           relu_max_pool2(torch::conv2d(y, small, bias))));
  const auto y64 = y.to(torch::kDouble);
  EXPECT_TRUE(torch::equal(
      conv5x5_relu_max_pool2(y64, weight.to(torch::kDouble), bias.to(torch::kDouble)),
      relu_max_pool2(torch::conv2d(y64, weight.to(torch::kDouble), bias.to(torch::kDouble)))));
}

}  // namespace
}  // namespace cflrun::model
