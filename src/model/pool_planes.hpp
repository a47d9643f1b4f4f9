#pragma once
// ReLU fused with 2 x 2 max-pooling over one plane, forward and backward, on plain float buffers:
// the loops shared by relu_max_pool2 and conv5x5_relu_max_pool2 (cpu_kernels.hpp).
#include <cstdint>

namespace cflrun::model::pooling {

/// A plane [height, width] whose rows lie row_stride floats apart, pooled to
/// [pooled_height, pooled_width] = [height / 2, width / 2] (contiguous).
struct PlaneShape {
  std::int64_t height, width, pooled_height, pooled_width, row_stride;
};

/// Widest pooled row the kernels take (the cnn's are 12 and 4); wider planes go to LibTorch.
constexpr std::int64_t kMaxPooledWidth = 64;

/// One plane's relu(max_pool2d): out [pooled_height, pooled_width]; winner (may be null) the
/// position 0-3 in the window (row-major) of each output's maximum, the first maximum, NaN winning
/// as in LibTorch's max_pool2d CPU kernel.
void pool_plane(const float* in, const PlaneShape& s, float* out, std::uint8_t* winner);

/// One plane's input gradient: each output's gradient to its window's winner where the output is
/// not <= 0, zero elsewhere in the first `width` columns of every row (an odd last row or column,
/// which no window covers, included); columns past `width` are not written.
void unpool_plane(const float* grad_out, const float* out, const std::uint8_t* winner,
                  const PlaneShape& s, float* grad_in);

}  // namespace cflrun::model::pooling
