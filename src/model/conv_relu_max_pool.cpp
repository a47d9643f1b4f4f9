// A 5 x 5 convolution fused with ReLU and 2 x 2 max-pooling on the CPU (cpu_kernels.hpp): per
// sample, the convolution over flat positions into a scratch buffer (conv_kernels_simd.hpp), then
// the pooling of each channel's plane from it; the backward pass unpools into the scratch buffer
// and accumulates the weight gradient from it. The 24 x 24 convolution output never reaches memory
// outside the cache.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/nn/functional/conv.h>

#include <cflrun/model/cpu_kernels.hpp>

#include "model/conv_kernels_simd.hpp"
#include "model/pool_planes.hpp"

namespace cflrun::model {
namespace {

/// Samples per parallel task, also the unit of the weight gradient's partial sums: fixed, so that
/// the gradient's summation order, and with it every float, does not depend on the thread count.
constexpr std::int64_t kSamplesPerTask = 8;

/// A sample's buffers: its input with the zeros the last taps read, and its convolution output
/// (or, backward, the convolution output's gradient) over flat positions.
struct SampleScratch {
  explicit SampleScratch(const simd::ConvShape& s)
      : input(static_cast<std::size_t>(s.padded_input), 0.0F),
        planes(static_cast<std::size_t>(s.out_channels * s.positions), 0.0F) {}
  std::vector<float> input, planes;

  /// Copies sample n of x ([N, C, H, W], contiguous) into `input`; its zero tail stays.
  void load(const float* x, std::int64_t n, const simd::ConvShape& s) {
    const auto floats = s.in_channels * s.height * s.width;
    std::copy_n(x + n * floats, floats, input.begin());
  }
};

/// The pooled planes of one output channel: rows of the flat positions, out_width of each used.
pooling::PlaneShape pooled_plane_shape(const simd::ConvShape& s) {
  return {s.out_height, s.out_width, s.out_height / 2, s.out_width / 2, s.width};
}

simd::ConvShape conv_shape_of(const torch::Tensor& x, const torch::Tensor& weight) {
  return simd::conv_shape(x.size(1), weight.size(0), x.size(2), x.size(3));
}

/// Runs `task(first, last)` over sample ranges of kSamplesPerTask on LibTorch's intra-op threads.
template <typename Task>
void for_each_task(std::int64_t samples, const Task& task) {
  const auto tasks = (samples + kSamplesPerTask - 1) / kSamplesPerTask;
  at::parallel_for(0, tasks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto t = begin; t < end; ++t) {
      task(t, t * kSamplesPerTask, std::min(samples, (t + 1) * kSamplesPerTask));
    }
  });
}

/// The pooled output [N, OC, OH / 2, OW / 2] and, if `with_winners`, the winners (uint8).
std::pair<torch::Tensor, torch::Tensor> fused_forward(const torch::Tensor& x,
                                                      const torch::Tensor& weight,
                                                      const torch::Tensor& bias,
                                                      bool with_winners) {
  const auto s = conv_shape_of(x, weight);
  const auto plane = pooled_plane_shape(s);
  auto out = torch::empty({x.size(0), s.out_channels, plane.pooled_height, plane.pooled_width},
                          x.options());
  torch::Tensor winners;
  if (with_winners) {
    winners = torch::empty(out.sizes(), x.options().dtype(torch::kUInt8));
  }
  const auto pooled = plane.pooled_height * plane.pooled_width;
  const auto w = weight.contiguous();
  const auto packed = weight.permute({1, 2, 3, 0}).contiguous();
  const auto b = bias.contiguous();
  for_each_task(x.size(0), [&](std::int64_t, std::int64_t first, std::int64_t last) {
    SampleScratch scratch(s);
    for (auto n = first; n < last; ++n) {
      scratch.load(x.data_ptr<float>(), n, s);
      simd::convolve_sample(scratch.input.data(), s, w.data_ptr<float>(), packed.data_ptr<float>(),
                            b.data_ptr<float>(), scratch.planes.data());
      for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
        const auto at = (n * s.out_channels + oc) * pooled;
        pooling::pool_plane(scratch.planes.data() + oc * s.positions, plane,
                            out.data_ptr<float>() + at,
                            with_winners ? winners.data_ptr<std::uint8_t>() + at : nullptr);
      }
    }
  });
  return {out, winners};
}

/// The weight and bias gradients, summed per task and then over tasks in task order.
std::pair<torch::Tensor, torch::Tensor> fused_weight_gradient(const torch::Tensor& x,
                                                              const torch::Tensor& weight,
                                                              const torch::Tensor& grad_out,
                                                              const torch::Tensor& out,
                                                              const torch::Tensor& winners) {
  const auto s = conv_shape_of(x, weight);
  const auto plane = pooled_plane_shape(s);
  const auto pooled = plane.pooled_height * plane.pooled_width;
  const auto tasks = (x.size(0) + kSamplesPerTask - 1) / kSamplesPerTask;
  auto partial_weight = torch::zeros({tasks, weight.numel()}, x.options());
  auto partial_bias = torch::zeros({tasks, s.out_channels}, x.options());
  for_each_task(x.size(0), [&](std::int64_t task, std::int64_t first, std::int64_t last) {
    SampleScratch scratch(s);  // zeros at the meaningless positions, never written
    for (auto n = first; n < last; ++n) {
      scratch.load(x.data_ptr<float>(), n, s);
      for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
        const auto at = (n * s.out_channels + oc) * pooled;
        pooling::unpool_plane(grad_out.data_ptr<float>() + at, out.data_ptr<float>() + at,
                              winners.data_ptr<std::uint8_t>() + at, plane,
                              scratch.planes.data() + oc * s.positions);
      }
      simd::add_weight_gradient(scratch.input.data(), s, scratch.planes.data(),
                                partial_weight[task].data_ptr<float>(),
                                partial_bias[task].data_ptr<float>());
    }
  });
  return {partial_weight.sum(0).view(weight.sizes()), partial_bias.sum(0)};
}

class ConvReluMaxPool2 : public torch::autograd::Function<ConvReluMaxPool2> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    auto [out, winners] = fused_forward(x, weight, bias, /*with_winners=*/true);
    context->save_for_backward({x, weight, out, winners});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const auto saved = context->get_saved_variables();
    auto [grad_weight, grad_bias] =
        fused_weight_gradient(saved[0], saved[1], grads[0].contiguous(), saved[2], saved[3]);
    return {torch::Tensor(), grad_weight, grad_bias};
  }
};

/// Whether the fused kernel takes these tensors: float32 CPU, contiguous input that needs no
/// gradient (a network's first layer, or any layer when scoring), a 5 x 5 kernel, pooled rows the
/// pooling loops take.
bool fused_kernel_takes(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias) {
  const auto cpu_float = [](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat;
  };
  return fused_kernels_enabled() && x.dim() == 4 && weight.dim() == 4 && bias.defined() &&
         cpu_float(x) && cpu_float(weight) && cpu_float(bias) && x.is_contiguous() &&
         !(x.requires_grad() && torch::GradMode::is_enabled()) && weight.size(1) == x.size(1) &&
         weight.size(2) == simd::kKernel && weight.size(3) == simd::kKernel &&
         x.size(2) >= simd::kKernel + 1 && x.size(3) >= simd::kKernel + 1 &&
         (x.size(3) - simd::kKernel + 1) / 2 <= pooling::kMaxPooledWidth;
}

}  // namespace

torch::Tensor conv5x5_relu_max_pool2(const torch::Tensor& x, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  if (!fused_kernel_takes(x, weight, bias)) {
    return relu_max_pool2(torch::conv2d(x, weight, bias));
  }
  if ((weight.requires_grad() || bias.requires_grad()) && torch::GradMode::is_enabled()) {
    return ConvReluMaxPool2::apply(x, weight, bias);
  }
  return fused_forward(x, weight, bias, /*with_winners=*/false).first;
}

}  // namespace cflrun::model
