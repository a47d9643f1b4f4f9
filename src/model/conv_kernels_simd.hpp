#pragma once
// The vector loops of the fused 5 x 5 convolution (conv_relu_max_pool.cpp), one sample at a time,
// on plain float buffers: written once with Google Highway and compiled for each instruction set
// (AVX-512, AVX2, SSE4, ...), the best one for the CPU chosen at run time (conv_kernels_simd.cpp).
#include <cstdint>

namespace cflrun::model::simd {

/// Side of the square kernels the vector loops take.
constexpr std::int64_t kKernel = 5;
/// Output positions are computed in blocks of this many floats (a multiple of every target's
/// vector block: 4 AVX-512 vectors).
constexpr std::int64_t kPositionBlock = 64;

/// One sample's convolution, valid, stride 1, computed over "flat positions": output position
/// p = oy * width + ox for oy < out_height and every ox < width, so that a row's last kKernel - 1
/// positions (ox >= out_width) and the positions past out_height * width are computed but
/// meaningless. In that layout the convolution is a 1-d correlation of each input plane with the
/// kernel's taps at offsets ky * width + kx, vectorised over p.
struct ConvShape {
  std::int64_t in_channels, out_channels, height, width;
  std::int64_t out_height, out_width;  ///< height - kKernel + 1, width - kKernel + 1
  std::int64_t positions;              ///< out_height * width rounded up to kPositionBlock
  std::int64_t padded_input;  ///< floats of a sample's input buffer: its planes, then zeros read
                              ///< by the last positions' taps
};

/// The shape for input planes [in_channels, height, width] (height and width >= kKernel).
ConvShape conv_shape(std::int64_t in_channels, std::int64_t out_channels, std::int64_t height,
                     std::int64_t width);

/// out[oc][p] = bias[oc] + sum over ic, ky, kx of weight[oc][ic][ky][kx] * in[ic][p + ky * width
/// + kx], for every flat position p < positions (where out_channels is one or two vectors of the
/// CPU's instruction set, e.g. 16 on AVX-512 and AVX2, vectorised over the channels instead and
/// computed at the meaningful positions only).
/// @param in             [padded_input] floats: the sample's planes, then zeros.
/// @param weight         [out_channels, in_channels, kKernel, kKernel]
/// @param packed_weight  the same as [in_channels, kKernel, kKernel, out_channels]
/// @param bias           [out_channels]
/// @param out            [out_channels, positions]
void convolve_sample(const float* in, const ConvShape& s, const float* weight,
                     const float* packed_weight, const float* bias, float* out);

/// Adds one sample's weight and bias gradients: grad_weight[oc][ic][ky][kx] += sum over p of
/// grad_out[oc][p] * in[ic][p + ky * width + kx]; grad_bias[oc] += sum over p of grad_out[oc][p].
/// @param grad_out  [out_channels, positions], zero at the meaningless positions.
void add_weight_gradient(const float* in, const ConvShape& s, const float* grad_out,
                         float* grad_weight, float* grad_bias);

}  // namespace cflrun::model::simd
