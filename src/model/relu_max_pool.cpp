// ReLU fused with 2 x 2 max-pooling on the CPU (cpu_kernels.hpp): one pass over the input that
// writes the output and, when a gradient is wanted, which of the window's four inputs won.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/cpu_kernels.hpp>

namespace cflrun::model {
namespace {

std::atomic<bool> use_fused_kernels{true};

/// Planes (N x C) per parallel task: a 24 x 24 plane is 576 floats.
constexpr std::int64_t kPlanesPerTask = 16;

struct PlaneShape {
  std::int64_t height, width, pooled_height, pooled_width;
};

/// Widest pooled row the kernels take (the cnn's are 12 and 4); wider planes go to LibTorch.
constexpr std::int64_t kMaxPooledWidth = 64;

/// `value` at window position `position` replaces (`best`, `at`) if it is the new maximum: the
/// first maximum in row-major order, NaN winning and then staying, as in LibTorch's max_pool2d CPU
/// kernel. Branch-free (selects), so that the loop around it vectorises.
inline void take(float value, std::int32_t position, float& best, std::int32_t& at) {
  const bool taken = value > best || value != value;
  best = taken ? value : best;
  at = taken ? position : at;
}

/// One plane: out [pooled_height, pooled_width]; winner (may be null) the position 0-3 in the
/// window (row-major) of each output's maximum. Written branch-free over a row so that GCC
/// vectorises it (12x faster than the branching loop in a micro-benchmark); one clone for AVX2 and
/// one for the baseline, chosen at load time. No AVX-512 clone: its 16-lane loop never runs on
/// rows of 12 or 4 outputs, and its scalar remainder measured 4-10x slower than the AVX2 clone.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void pool_plane(
    const float* __restrict in, const PlaneShape& s, float* __restrict out,
    std::uint8_t* __restrict winner) {
  std::int32_t at_row[kMaxPooledWidth];
  for (std::int64_t oy = 0; oy < s.pooled_height; ++oy) {
    const float* top = in + 2 * oy * s.width;
    const float* bottom = top + s.width;
    float* out_row = out + oy * s.pooled_width;
    for (std::int64_t ox = 0; ox < s.pooled_width; ++ox) {
      float best = top[2 * ox];
      std::int32_t at = 0;
      take(top[2 * ox + 1], 1, best, at);
      take(bottom[2 * ox], 2, best, at);
      take(bottom[2 * ox + 1], 3, best, at);
      out_row[ox] = best <= 0.0F ? 0.0F : best;  // ReLU; NaN stays
      at_row[ox] = at;
    }
    if (winner != nullptr) {
      for (std::int64_t ox = 0; ox < s.pooled_width; ++ox) {
        winner[oy * s.pooled_width + ox] = static_cast<std::uint8_t>(at_row[ox]);
      }
    }
  }
}

/// One plane's input gradient, every element written: each output's gradient to its window's
/// winner where the output is not <= 0, zero elsewhere (also in an odd last row or column, which no
/// window covers).
__attribute__((target_clones("arch=x86-64-v3", "default"))) void unpool_plane(
    const float* __restrict grad_out, const float* __restrict out,
    const std::uint8_t* __restrict winner, const PlaneShape& s, float* __restrict grad_in) {
  float to[4][kMaxPooledWidth];  // the gradient of each window position, per output
  for (std::int64_t oy = 0; oy < s.pooled_height; ++oy) {
    const auto row = oy * s.pooled_width;
    for (std::int64_t ox = 0; ox < s.pooled_width; ++ox) {
      const float g = out[row + ox] <= 0.0F ? 0.0F : grad_out[row + ox];
      const std::int32_t at = winner[row + ox];
      for (std::int32_t position = 0; position < 4; ++position) {
        to[position][ox] = at == position ? g : 0.0F;
      }
    }
    float* top = grad_in + 2 * oy * s.width;
    float* bottom = top + s.width;
    for (std::int64_t ox = 0; ox < s.pooled_width; ++ox) {
      top[2 * ox] = to[0][ox];
      top[2 * ox + 1] = to[1][ox];
      bottom[2 * ox] = to[2][ox];
      bottom[2 * ox + 1] = to[3][ox];
    }
    if (s.width % 2 != 0) {
      top[s.width - 1] = 0.0F;
      bottom[s.width - 1] = 0.0F;
    }
  }
  if (s.height % 2 != 0) {
    std::fill_n(grad_in + (s.height - 1) * s.width, s.width, 0.0F);
  }
}

PlaneShape plane_shape(const torch::Tensor& x) {
  return {x.size(2), x.size(3), x.size(2) / 2, x.size(3) / 2};
}

/// Runs `plane(index)` for every plane of N x C, on LibTorch's intra-op threads.
template <typename Plane>
void for_each_plane(std::int64_t planes, const Plane& plane) {
  at::parallel_for(0, planes, kPlanesPerTask, [&](std::int64_t begin, std::int64_t end) {
    for (auto p = begin; p < end; ++p) {
      plane(p);
    }
  });
}

/// The output [N, C, H/2, W/2] and, if `with_winners`, the winners (uint8, same shape).
std::pair<torch::Tensor, torch::Tensor> pool_forward(const torch::Tensor& x, bool with_winners) {
  const auto s = plane_shape(x);
  auto out = torch::empty({x.size(0), x.size(1), s.pooled_height, s.pooled_width}, x.options());
  torch::Tensor winners;
  if (with_winners) {
    winners = torch::empty(out.sizes(), x.options().dtype(torch::kUInt8));
  }
  const auto in_plane = s.height * s.width;
  const auto out_plane = s.pooled_height * s.pooled_width;
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  std::uint8_t* w = with_winners ? winners.data_ptr<std::uint8_t>() : nullptr;
  for_each_plane(x.size(0) * x.size(1), [&](std::int64_t p) {
    pool_plane(in + p * in_plane, s, o + p * out_plane, w == nullptr ? nullptr : w + p * out_plane);
  });
  return {out, winners};
}

class ReluMaxPool2 : public torch::autograd::Function<ReluMaxPool2> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x) {
    auto [out, winners] = pool_forward(x, /*with_winners=*/true);
    context->save_for_backward({out, winners});
    context->saved_data["height"] = x.size(2);
    context->saved_data["width"] = x.size(3);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grads) {
    const auto saved = context->get_saved_variables();
    const auto& out = saved[0];
    const auto& winners = saved[1];
    const auto grad_out = grads[0].contiguous();
    auto grad_in = torch::empty({out.size(0), out.size(1), context->saved_data["height"].toInt(),
                                 context->saved_data["width"].toInt()},
                                out.options());
    const auto s = plane_shape(grad_in);
    const auto in_plane = s.height * s.width;
    const auto out_plane = s.pooled_height * s.pooled_width;
    const float* g = grad_out.data_ptr<float>();
    const float* o = out.data_ptr<float>();
    const std::uint8_t* w = winners.data_ptr<std::uint8_t>();
    float* gi = grad_in.data_ptr<float>();
    for_each_plane(out.size(0) * out.size(1), [&](std::int64_t p) {
      unpool_plane(g + p * out_plane, o + p * out_plane, w + p * out_plane, s, gi + p * in_plane);
    });
    return {grad_in};
  }
};

}  // namespace

void set_fused_kernels(bool enabled) { use_fused_kernels = enabled; }

bool fused_kernels_enabled() { return use_fused_kernels; }

torch::Tensor relu_max_pool2(const torch::Tensor& x) {
  if (x.dim() != 4 || x.size(2) < 2 || x.size(3) < 2) {
    throw ShapeError("relu_max_pool2: expected [N, C, H, W] with H, W >= 2, but got " +
                     c10::str(x.sizes()));
  }
  const bool fused = use_fused_kernels && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
                     x.is_contiguous() && x.size(3) / 2 <= kMaxPooledWidth;
  if (!fused) {
    return torch::relu(torch::max_pool2d(x, 2));
  }
  if (x.requires_grad() && torch::GradMode::is_enabled()) {
    return ReluMaxPool2::apply(x);
  }
  return pool_forward(x, /*with_winners=*/false).first;
}

}  // namespace cflrun::model
