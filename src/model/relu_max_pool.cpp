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

#include "model/pool_planes.hpp"

namespace cflrun::model {
namespace {

using pooling::kMaxPooledWidth;
using pooling::PlaneShape;
using pooling::pool_plane;
using pooling::unpool_plane;

std::atomic<bool> use_fused_kernels{true};

/// Planes (N x C) per parallel task: a 24 x 24 plane is 576 floats.
constexpr std::int64_t kPlanesPerTask = 16;

PlaneShape plane_shape(const torch::Tensor& x) {
  return {x.size(2), x.size(3), x.size(2) / 2, x.size(3) / 2, x.size(3)};
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
