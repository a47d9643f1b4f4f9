// A 5 x 5 convolution fused with ReLU and 2 x 2 max-pooling on the CPU (cpu_kernels.hpp): per
// sample, the convolution over flat positions into a scratch buffer (conv_kernels_simd.hpp), then
// the pooling of each channel's plane from it. The backward pass lists each sample's output
// gradients with their winners' positions (nonzero only at a window's winner where the output is
// above 0: at most a quarter; the zeros dropped unless an entry is cheaper than dropping it) and
// accumulates the weight gradient from them; where the input needs a gradient it unpools into the
// scratch buffer and scatters each nonzero entry into the input's gradient. The 24 x 24
// convolution output never reaches memory outside the cache.
#include <algorithm>
#include <cstdint>
#include <optional>
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

/// The input gradient of the convolution: each sample's nonzero output gradients scattered over
/// their 5 x 5 input positions, channels last (conv_kernels_simd.hpp), then transposed into the
/// input's layout. Each sample's gradient depends on that sample only.
class InputGradient {
 public:
  InputGradient(const simd::ConvShape& s, const torch::Tensor& weight)
      : shape_(s),
        stride_(simd::input_channel_stride(s.in_channels)),
        weight_(torch::zeros({s.out_channels, simd::kKernel, simd::kKernel, stride_},
                             weight.options())) {
    weight_.narrow(3, 0, s.in_channels).copy_(weight.permute({0, 2, 3, 1}));
  }

  /// A task's buffer: one sample's input gradient, channels last.
  std::vector<float> scratch() const {
    return std::vector<float>(static_cast<std::size_t>(shape_.height * shape_.width * stride_));
  }

  /// grad_in [in_channels, height, width] of one sample from its grad_out [out_channels,
  /// positions] (flat positions, zero at the meaningless ones).
  void compute(const float* grad_out, std::vector<float>& scratch, float* grad_in) const {
    std::fill(scratch.begin(), scratch.end(), 0.0F);
    simd::add_input_gradient(grad_out, shape_, weight_.data_ptr<float>(), stride_, scratch.data());
    const auto plane = shape_.height * shape_.width;
    for (std::int64_t ic = 0; ic < shape_.in_channels; ++ic) {
      for (std::int64_t p = 0; p < plane; ++p) {
        grad_in[ic * plane + p] = scratch[static_cast<std::size_t>(p * stride_ + ic)];
      }
    }
  }

 private:
  simd::ConvShape shape_;
  std::int64_t stride_;   ///< floats per input position in the scratch buffer
  torch::Tensor weight_;  ///< [out, 5, 5, stride], zero past in_channels
};

/// The gradients of the fused layer; `input` undefined where it was not asked for.
struct ConvGradients {
  torch::Tensor input, weight, bias;
};

/// One sample's output gradients listed per output channel with their positions (only the nonzero
/// ones where `compact`), from the pooled gradient and the winners: what
/// add_sparse_weight_gradient takes.
struct ListedGradients {
  ListedGradients(const simd::ConvShape& s, const pooling::PlaneShape& plane)
      : compact(s.in_channels >= kCompactFromChannels),
        capacity(plane.pooled_height * plane.pooled_width),
        row_stride(static_cast<std::int32_t>(plane.row_stride)),
        window_first(static_cast<std::size_t>(capacity)),
        values(static_cast<std::size_t>(s.out_channels * capacity)),
        positions(values.size()),
        counts(static_cast<std::size_t>(s.out_channels)) {
    for (std::int64_t oy = 0; oy < plane.pooled_height; ++oy) {
      for (std::int64_t ox = 0; ox < plane.pooled_width; ++ox) {
        window_first[static_cast<std::size_t>(oy * plane.pooled_width + ox)] =
            static_cast<std::int32_t>(2 * oy * plane.row_stride + 2 * ox);
      }
    }
  }

  /// Lists one sample's gradients: grad_out, out and winners [OC, pooled] at that sample.
  void gather(const float* grad_out, const float* out, const std::uint8_t* winners) {
    for (std::size_t oc = 0; oc < counts.size(); ++oc) {
      const auto at = static_cast<std::int64_t>(oc) * capacity;
      counts[oc] = simd::gather_plane_gradients(grad_out + at, out + at, winners + at,
                                                window_first.data(), capacity, row_stride, compact,
                                                values.data() + at, positions.data() + at);
    }
  }

  /// Input channels from which the zero gradients are dropped: an entry costs 5 multiply-adds per
  /// input channel, dropping it (a scalar loop) about as much as 2 of them. On the AMD EPYC (AVX2),
  /// conv1 (1 channel) forward + backward 0.86 -> 0.73 ms per 100 samples listing all.
  static constexpr std::int64_t kCompactFromChannels = 2;

  bool compact;           ///< whether the zero gradients are dropped
  std::int64_t capacity;  ///< entries per channel: the pooled plane's outputs
  std::int32_t row_stride;
  std::vector<std::int32_t> window_first;  ///< [capacity]: each window's top-left flat position
  std::vector<float> values;
  std::vector<std::int32_t> positions, counts;
};

/// The gradients: weight and bias summed per task and then over tasks in task order; the input's
/// (if `input_gradient`) per sample.
ConvGradients fused_backward(const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& grad_out, const torch::Tensor& out,
                             const torch::Tensor& winners, bool input_gradient) {
  const auto s = conv_shape_of(x, weight);
  const auto plane = pooled_plane_shape(s);
  const auto pooled = plane.pooled_height * plane.pooled_width;
  const auto tasks = (x.size(0) + kSamplesPerTask - 1) / kSamplesPerTask;
  auto partial_weight = torch::zeros({tasks, weight.numel()}, x.options());
  auto partial_bias = torch::zeros({tasks, s.out_channels}, x.options());
  torch::Tensor grad_in;
  std::optional<InputGradient> input_gradient_of;
  if (input_gradient) {
    grad_in = torch::empty(x.sizes(), x.options());
    input_gradient_of.emplace(s, weight.contiguous());
  }
  const auto sample_floats = s.in_channels * s.height * s.width;
  const auto sample_outputs = s.out_channels * pooled;
  const float* grad_out_at = grad_out.data_ptr<float>();
  const float* out_at = out.data_ptr<float>();
  const std::uint8_t* winners_at = winners.data_ptr<std::uint8_t>();
  for_each_task(x.size(0), [&](std::int64_t task, std::int64_t first, std::int64_t last) {
    SampleScratch scratch(s);  // zeros at the meaningless positions, never written
    ListedGradients listed(s, plane);
    auto input_scratch = input_gradient_of ? input_gradient_of->scratch() : std::vector<float>{};
    float* task_weight = partial_weight.data_ptr<float>() + task * weight.numel();
    float* task_bias = partial_bias.data_ptr<float>() + task * s.out_channels;
    for (auto n = first; n < last; ++n) {
      const auto sample = n * sample_outputs;
      scratch.load(x.data_ptr<float>(), n, s);
      listed.gather(grad_out_at + sample, out_at + sample, winners_at + sample);
      simd::add_sparse_weight_gradient(scratch.input.data(), s, listed.values.data(),
                                       listed.positions.data(), listed.counts.data(),
                                       listed.capacity, task_weight, task_bias);
      if (input_gradient_of) {
        for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
          const auto at = sample + oc * pooled;
          pooling::unpool_plane(grad_out_at + at, out_at + at, winners_at + at, plane,
                                scratch.planes.data() + oc * s.positions);
        }
        input_gradient_of->compute(scratch.planes.data(), input_scratch,
                                   grad_in.data_ptr<float>() + n * sample_floats);
      }
    }
  });
  return {grad_in, partial_weight.sum(0).view(weight.sizes()), partial_bias.sum(0)};
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
    auto gradients = fused_backward(saved[0], saved[1], grads[0].contiguous(), saved[2], saved[3],
                                    context->needs_input_grad(0));
    return {gradients.input, gradients.weight, gradients.bias};
  }
};

/// Whether the fused kernel takes these tensors: float32 CPU, contiguous input, a 5 x 5 kernel,
/// pooled rows the pooling loops take.
bool fused_kernel_takes(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias) {
  const auto cpu_float = [](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat;
  };
  return fused_kernels_enabled() && x.dim() == 4 && weight.dim() == 4 && bias.defined() &&
         cpu_float(x) && cpu_float(weight) && cpu_float(bias) && x.is_contiguous() &&
         weight.size(1) == x.size(1) && weight.size(2) == simd::kKernel &&
         weight.size(3) == simd::kKernel && x.size(2) >= simd::kKernel + 1 &&
         x.size(3) >= simd::kKernel + 1 &&
         (x.size(3) - simd::kKernel + 1) / 2 <= pooling::kMaxPooledWidth;
}

}  // namespace

torch::Tensor conv5x5_relu_max_pool2(const torch::Tensor& x, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  if (!fused_kernel_takes(x, weight, bias)) {
    return relu_max_pool2(torch::conv2d(x, weight, bias));
  }
  if ((x.requires_grad() || weight.requires_grad() || bias.requires_grad()) &&
      torch::GradMode::is_enabled()) {
    return ConvReluMaxPool2::apply(x, weight, bias);
  }
  return fused_forward(x, weight, bias, /*with_winners=*/false).first;
}

}  // namespace cflrun::model
