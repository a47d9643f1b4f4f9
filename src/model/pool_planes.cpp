// The per-plane loops of ReLU fused with 2 x 2 max-pooling (pool_planes.hpp), written
// branch-free so that GCC vectorises them.
#include <algorithm>

#include "model/pool_planes.hpp"

namespace cflrun::model::pooling {
namespace {

/// `value` at window position `position` replaces (`best`, `at`) if it is the new maximum: the
/// first maximum in row-major order, NaN winning and then staying, as in LibTorch's max_pool2d CPU
/// kernel. Branch-free (selects), so that the loop around it vectorises.
inline void take(float value, std::int32_t position, float& best, std::int32_t& at) {
  const bool taken = value > best || value != value;
  best = taken ? value : best;
  at = taken ? position : at;
}

/// Outputs whose window gradients are staged at once in unpool_plane: long enough for the
/// vectorised loop to run whole vectors (a row of the cnn's planes is only 12 or 4 outputs).
constexpr std::int64_t kStagedOutputs = 256;

/// The gradient to each of the four window positions (row-major) of `count` outputs: each
/// output's gradient to its winner where the output is not <= 0, zero elsewhere. Written as
/// selects on the winner's column (bit 0) and row (bit 1): compared with 0-3, GCC turns the four
/// tests into a switch and does not vectorise.
inline void window_gradients(const float* __restrict grad_out, const float* __restrict out,
                             const std::uint8_t* __restrict winner, std::int64_t count,
                             float (*__restrict to)[kStagedOutputs]) {
  for (std::int64_t i = 0; i < count; ++i) {
    const float incoming = grad_out[i];  // loaded unconditionally: no branch
    const float g = out[i] <= 0.0F ? 0.0F : incoming;
    const std::int32_t at = winner[i];
    const float left = (at & 1) == 0 ? g : 0.0F;
    const float right = (at & 1) != 0 ? g : 0.0F;
    const bool low = (at & 2) != 0;
    to[0][i] = low ? 0.0F : left;
    to[1][i] = low ? 0.0F : right;
    to[2][i] = low ? left : 0.0F;
    to[3][i] = low ? right : 0.0F;
  }
}

}  // namespace

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
    const float* top = in + 2 * oy * s.row_stride;
    const float* bottom = top + s.row_stride;
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
  float to[4][kStagedOutputs];
  const std::int64_t rows_per_stage = kStagedOutputs / s.pooled_width;
  for (std::int64_t first = 0; first < s.pooled_height; first += rows_per_stage) {
    const auto rows = std::min(rows_per_stage, s.pooled_height - first);
    const auto offset = first * s.pooled_width;
    window_gradients(grad_out + offset, out + offset, winner + offset, rows * s.pooled_width, to);
    for (std::int64_t r = 0; r < rows; ++r) {
      float* top = grad_in + 2 * (first + r) * s.row_stride;
      float* bottom = top + s.row_stride;
      const auto staged = r * s.pooled_width;
      for (std::int64_t ox = 0; ox < s.pooled_width; ++ox) {
        top[2 * ox] = to[0][staged + ox];
        top[2 * ox + 1] = to[1][staged + ox];
        bottom[2 * ox] = to[2][staged + ox];
        bottom[2 * ox + 1] = to[3][staged + ox];
      }
      if (s.width % 2 != 0) {
        top[s.width - 1] = 0.0F;
        bottom[s.width - 1] = 0.0F;
      }
    }
  }
  if (s.height % 2 != 0) {
    std::fill_n(grad_in + (s.height - 1) * s.row_stride, s.width, 0.0F);
  }
}

}  // namespace cflrun::model::pooling
