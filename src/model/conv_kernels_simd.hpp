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
/// Floats in the widest vector of any target (AVX-512): the zeros past a sample's input that a
/// vector load at its last tap may read.
constexpr std::int64_t kWidestVector = 16;

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

/// Adds one sample's weight and bias gradients from its nonzero output gradients (after a 2 x 2
/// max-pooling at most a quarter of them): grad_weight[oc][ic][ky][kx] += sum over the entries of
/// value * in[ic][position + ky * width + kx]; grad_bias[oc] += sum of the values. Per entry, one
/// vector multiply-add per kernel row over the row's 5 taps.
/// @param values, positions  output channel oc's entries at oc * capacity: `counts[oc]` values and
///                           their flat positions oy * width + ox.
/// @param grad_weight        [out_channels, in_channels, kKernel, kKernel]
void add_sparse_weight_gradient(const float* in, const ConvShape& s, const float* values,
                                const std::int32_t* positions, const std::int32_t* counts,
                                std::int64_t capacity, float* grad_weight, float* grad_bias);

/// One plane's gradients after ReLU + 2 x 2 max-pooling, listed in output order: each output's
/// gradient, 0 where the output is <= 0 (NaN counts as above), with the flat position of its
/// window's winner, window_first[i] + (winner >> 1) * row_stride + (winner & 1). What
/// add_sparse_weight_gradient takes. `compact` drops the zero gradients (one output at a time);
/// otherwise every output is listed, a vector at a time: the zeros add nothing to the weight
/// gradient's sums, so both give the same floats (for finite inputs), and listing all is faster
/// where an entry costs few multiply-adds (one input channel: 5 per entry).
/// @param grad_out, out, winner  [outputs]: the pooled plane's gradient, output and winners (0-3,
///                               row-major in the window, pool_planes.hpp).
/// @param window_first           [outputs]: each window's top-left flat position.
/// @param values, positions      room for `outputs` entries.
/// @return how many entries (`outputs` unless compact).
std::int32_t gather_plane_gradients(const float* grad_out, const float* out,
                                    const std::uint8_t* winner, const std::int32_t* window_first,
                                    std::int64_t outputs, std::int32_t row_stride, bool compact,
                                    float* values, std::int32_t* positions);

/// Floats per input position of add_input_gradient's buffers: in_channels rounded up to a
/// multiple of the CPU's vector.
std::int64_t input_channel_stride(std::int64_t in_channels);

/// Adds one sample's input gradient, channels last: grad_in[(y * width + x) * stride + ic] +=
/// sum over oc, ky, kx of weight[oc][ic][ky][kx] * grad_out[oc][(y - ky) * width + x - kx] over
/// the valid output positions, as a scatter from each nonzero output gradient (after a 2 x 2
/// max-pooling at most a quarter of them), vectorised over the input channels.
/// @param grad_out        [out_channels, positions], zero at the meaningless positions.
/// @param channels_last_weight  weight as [out_channels, kKernel, kKernel, stride], zero past
///                              in_channels.
/// @param stride          input_channel_stride(in_channels), computed once by the caller.
/// @param grad_in         [height * width, stride].
void add_input_gradient(const float* grad_out, const ConvShape& s,
                        const float* channels_last_weight, std::int64_t stride, float* grad_in);

}  // namespace cflrun::model::simd
