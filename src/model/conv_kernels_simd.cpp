// The vector loops of conv_kernels_simd.hpp in Google Highway: foreach_target.h compiles this file
// once per instruction set, HWY_DYNAMIC_DISPATCH picks the best the CPU has on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "model/conv_kernels_simd.cpp"
#include <hwy/foreach_target.h>  // before highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/conv_kernels_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace cflrun::model::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using Tag = hn::ScalableTag<float>;
using Vec = hn::Vec<Tag>;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kManyRegisters = true;  // AVX-512: 32 vector registers
#else
constexpr bool kManyRegisters = false;  // AVX2, SSE4: 16
#endif
/// Output channels per block of accumulators: 6 (the cnn's conv1) in either case.
constexpr std::size_t kOutBlock = 6;
/// Vectors of positions per block: 6 x 4 accumulators + 4 inputs + 1 weight fit 32 registers;
/// 6 x 2 + 2 + 1 fit 16.
constexpr std::size_t kPositionVectors = kManyRegisters ? 4 : 2;
constexpr std::size_t kTaps = kKernel * kKernel;

/// kOut output channels (weight, bias and out at the first of them) at positions
/// [first, first + kPositionVectors * lanes).
template <std::size_t kOut>
HWY_INLINE void convolve_block(const float* HWY_RESTRICT in, const ConvShape& s,
                               const float* HWY_RESTRICT weight, const float* HWY_RESTRICT bias,
                               float* HWY_RESTRICT out, std::int64_t first) {
  const Tag d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto weight_stride = s.in_channels * static_cast<std::int64_t>(kTaps);
  Vec acc[kOut][kPositionVectors];
  for (std::size_t o = 0; o < kOut; ++o) {
    for (std::size_t v = 0; v < kPositionVectors; ++v) {
      acc[o][v] = hn::Set(d, bias[o]);
    }
  }
  for (std::int64_t ic = 0; ic < s.in_channels; ++ic) {
    const float* plane = in + ic * s.height * s.width + first;
    const float* taps = weight + ic * static_cast<std::int64_t>(kTaps);
    for (std::int64_t ky = 0; ky < kKernel; ++ky) {
      for (std::int64_t kx = 0; kx < kKernel; ++kx) {
        const float* src = plane + ky * s.width + kx;
        Vec x[kPositionVectors];
        for (std::size_t v = 0; v < kPositionVectors; ++v) {
          x[v] = hn::LoadU(d, src + static_cast<std::int64_t>(v) * lanes);
        }
        const float* tap = taps + ky * kKernel + kx;
        for (std::size_t o = 0; o < kOut; ++o) {
          const Vec w = hn::Set(d, tap[static_cast<std::int64_t>(o) * weight_stride]);
          for (std::size_t v = 0; v < kPositionVectors; ++v) {
            acc[o][v] = hn::MulAdd(w, x[v], acc[o][v]);
          }
        }
      }
    }
  }
  for (std::size_t o = 0; o < kOut; ++o) {
    for (std::size_t v = 0; v < kPositionVectors; ++v) {
      hn::StoreU(acc[o][v], d,
                 out + static_cast<std::int64_t>(o) * s.positions + first +
                     static_cast<std::int64_t>(v) * lanes);
    }
  }
}

template <std::size_t kOut>
HWY_INLINE void convolve_channels(const float* HWY_RESTRICT in, const ConvShape& s,
                                  const float* HWY_RESTRICT weight, const float* HWY_RESTRICT bias,
                                  float* HWY_RESTRICT out) {
  const auto block = static_cast<std::int64_t>(kPositionVectors * hn::Lanes(Tag()));
  for (std::int64_t first = 0; first < s.positions; first += block) {
    convolve_block<kOut>(in, s, weight, bias, out, first);
  }
}

/// Positions per block of the channel-vectorised loop: 8 accumulators (positions x channel
/// vectors) with their weights and one input fit 16 registers.
constexpr std::size_t kChannelAccumulators = 8;

/// kVectors vectors of output channels (all of them) at kPositions consecutive positions of one
/// output row, from (oy, ox): per tap, the channels' weights are loaded once and each position's
/// input broadcast. Stored into out [out_channels, positions] lane by lane.
template <std::size_t kVectors, std::size_t kPositions>
HWY_INLINE void convolve_channels_block(const float* HWY_RESTRICT in, const ConvShape& s,
                                        const float* HWY_RESTRICT packed_weight,
                                        const float* HWY_RESTRICT bias, float* HWY_RESTRICT out,
                                        std::int64_t oy, std::int64_t ox) {
  const Tag d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  Vec acc[kPositions][kVectors];
  for (std::size_t v = 0; v < kVectors; ++v) {
    const Vec b = hn::LoadU(d, bias + static_cast<std::int64_t>(v) * lanes);
    for (std::size_t p = 0; p < kPositions; ++p) {
      acc[p][v] = b;
    }
  }
  for (std::int64_t ic = 0; ic < s.in_channels; ++ic) {
    for (std::int64_t ky = 0; ky < kKernel; ++ky) {
      const float* row = in + ic * s.height * s.width + (oy + ky) * s.width + ox;
      const float* taps = packed_weight + (ic * kKernel + ky) * kKernel * s.out_channels;
      for (std::int64_t kx = 0; kx < kKernel; ++kx) {
        Vec w[kVectors];
        for (std::size_t v = 0; v < kVectors; ++v) {
          w[v] = hn::LoadU(d, taps + kx * s.out_channels + static_cast<std::int64_t>(v) * lanes);
        }
        for (std::size_t p = 0; p < kPositions; ++p) {
          const Vec x = hn::Set(d, row[static_cast<std::int64_t>(p) + kx]);
          for (std::size_t v = 0; v < kVectors; ++v) {
            acc[p][v] = hn::MulAdd(w[v], x, acc[p][v]);
          }
        }
      }
    }
  }
  HWY_ALIGN float lane_values[hn::MaxLanes(d)];
  for (std::size_t p = 0; p < kPositions; ++p) {
    float* position = out + oy * s.width + ox + static_cast<std::int64_t>(p);
    for (std::size_t v = 0; v < kVectors; ++v) {
      hn::Store(acc[p][v], d, lane_values);
      for (std::int64_t lane = 0; lane < lanes; ++lane) {
        position[(static_cast<std::int64_t>(v) * lanes + lane) * s.positions] = lane_values[lane];
      }
    }
  }
}

/// Every output channel at the valid positions only (no meaningless columns computed), vectorised
/// over the channels: for out_channels of one or two vectors (the cnn's conv2, 16 channels).
template <std::size_t kVectors>
HWY_INLINE void convolve_over_channels(const float* HWY_RESTRICT in, const ConvShape& s,
                                       const float* HWY_RESTRICT packed_weight,
                                       const float* HWY_RESTRICT bias, float* HWY_RESTRICT out) {
  constexpr std::size_t kPositions = kChannelAccumulators / kVectors;
  for (std::int64_t oy = 0; oy < s.out_height; ++oy) {
    std::int64_t ox = 0;
    for (; ox + static_cast<std::int64_t>(kPositions) <= s.out_width;
         ox += static_cast<std::int64_t>(kPositions)) {
      convolve_channels_block<kVectors, kPositions>(in, s, packed_weight, bias, out, oy, ox);
    }
    for (; ox < s.out_width; ++ox) {
      convolve_channels_block<kVectors, 1>(in, s, packed_weight, bias, out, oy, ox);
    }
  }
}

void ConvolveSample(const float* HWY_RESTRICT in, const ConvShape& s,
                    const float* HWY_RESTRICT weight, const float* HWY_RESTRICT packed_weight,
                    const float* HWY_RESTRICT bias, float* HWY_RESTRICT out) {
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(Tag()));
  if (s.out_channels == lanes) {
    convolve_over_channels<1>(in, s, packed_weight, bias, out);
    return;
  }
  if (s.out_channels == 2 * lanes) {
    convolve_over_channels<2>(in, s, packed_weight, bias, out);
    return;
  }
  const auto weight_stride = s.in_channels * static_cast<std::int64_t>(kTaps);
  for (std::int64_t oc = 0; oc < s.out_channels; oc += static_cast<std::int64_t>(kOutBlock)) {
    const float* w = weight + oc * weight_stride;
    float* o = out + oc * s.positions;
    switch (std::min<std::int64_t>(kOutBlock, s.out_channels - oc)) {
      case 6:
        convolve_channels<6>(in, s, w, bias + oc, o);
        break;
      case 5:
        convolve_channels<5>(in, s, w, bias + oc, o);
        break;
      case 4:
        convolve_channels<4>(in, s, w, bias + oc, o);
        break;
      case 3:
        convolve_channels<3>(in, s, w, bias + oc, o);
        break;
      case 2:
        convolve_channels<2>(in, s, w, bias + oc, o);
        break;
      default:
        convolve_channels<1>(in, s, w, bias + oc, o);
        break;
    }
  }
}

/// Kernel rows per block of the input gradient's scatter: 5 x kScatterRows accumulators, the
/// gradient and a weight fit the registers.
constexpr std::size_t kScatterRows = kManyRegisters ? 5 : 2;

/// One output position's input gradient over kRows kernel rows from ky, for one vector of input
/// channels (at `channel`): the sum over its nonzero output gradients (`count` of them, with
/// their channels) of gradient x weight taps, accumulated in registers, then added to grad_in at
/// the position's kRows x 5 input positions (`at`: the first of them).
template <std::size_t kRows>
HWY_INLINE void scatter_rows(const float* HWY_RESTRICT gradients,
                             const std::int64_t* HWY_RESTRICT channels, std::size_t count,
                             const float* HWY_RESTRICT channels_last_weight,
                             std::int64_t channel_stride, std::int64_t ky, std::int64_t channel,
                             std::int64_t row_floats, float* HWY_RESTRICT at) {
  const Tag d;
  Vec acc[kRows][kKernel];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::int64_t kx = 0; kx < kKernel; ++kx) {
      acc[r][kx] = hn::Zero(d);
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const Vec scale = hn::Set(d, gradients[i]);
    const float* taps =
        channels_last_weight +
        (channels[i] * static_cast<std::int64_t>(kTaps) + ky * kKernel) * channel_stride + channel;
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::int64_t kx = 0; kx < kKernel; ++kx) {
        const auto tap = static_cast<std::int64_t>(r) * kKernel + kx;
        acc[r][kx] = hn::MulAdd(scale, hn::LoadU(d, taps + tap * channel_stride), acc[r][kx]);
      }
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::int64_t kx = 0; kx < kKernel; ++kx) {
      float* out = at + static_cast<std::int64_t>(r) * row_floats + kx * channel_stride;
      hn::StoreU(hn::Add(hn::LoadU(d, out), acc[r][kx]), d, out);
    }
  }
}

void AddInputGradient(const float* HWY_RESTRICT grad_out, const ConvShape& s,
                      const float* HWY_RESTRICT channels_last_weight, std::int64_t channel_stride,
                      float* HWY_RESTRICT grad_in) {
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(Tag()));
  const auto row_floats = s.width * channel_stride;
  std::vector<float> gradients(static_cast<std::size_t>(s.out_channels));
  std::vector<std::int64_t> channels(static_cast<std::size_t>(s.out_channels));
  for (std::int64_t oy = 0; oy < s.out_height; ++oy) {
    for (std::int64_t ox = 0; ox < s.out_width; ++ox) {
      // the position's nonzero gradients (after a max-pooling, only a window's winner has one),
      // gathered without branches
      std::size_t count = 0;
      for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
        const float g = grad_out[oc * s.positions + oy * s.width + ox];
        gradients[count] = g;
        channels[count] = oc;
        count += g != 0.0F ? 1 : 0;
      }
      if (count == 0) {
        continue;
      }
      for (std::int64_t channel = 0; channel < channel_stride; channel += lanes) {
        std::int64_t ky = 0;
        for (; ky + static_cast<std::int64_t>(kScatterRows) <= kKernel;
             ky += static_cast<std::int64_t>(kScatterRows)) {
          scatter_rows<kScatterRows>(
              gradients.data(), channels.data(), count, channels_last_weight, channel_stride, ky,
              channel, row_floats,
              grad_in + (oy + ky) * row_floats + ox * channel_stride + channel);
        }
        for (; ky < kKernel; ++ky) {
          scatter_rows<1>(gradients.data(), channels.data(), count, channels_last_weight,
                          channel_stride, ky, channel, row_floats,
                          grad_in + (oy + ky) * row_floats + ox * channel_stride + channel);
        }
      }
    }
  }
}

/// Vectors that hold a kernel row's 5 taps: 1 where a vector has 8 or more floats.
constexpr std::size_t kRowVectors = (kKernel + hn::MaxLanes(Tag()) - 1) / hn::MaxLanes(Tag());

void AddSparseWeightGradient(const float* HWY_RESTRICT in, const ConvShape& s,
                             const float* HWY_RESTRICT values,
                             const std::int32_t* HWY_RESTRICT positions,
                             const std::int32_t* HWY_RESTRICT counts, std::int64_t capacity,
                             float* HWY_RESTRICT grad_weight, float* HWY_RESTRICT grad_bias) {
  const Tag d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  HWY_ALIGN float row_taps[kRowVectors * hn::MaxLanes(d)];
  for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
    const float* value = values + oc * capacity;
    const std::int32_t* position = positions + oc * capacity;
    const std::int32_t count = counts[oc];
    float bias_sum = 0.0F;
    for (std::int32_t i = 0; i < count; ++i) {
      bias_sum += value[i];
    }
    grad_bias[oc] += bias_sum;
    for (std::int64_t ic = 0; ic < s.in_channels; ++ic) {
      const float* plane = in + ic * s.height * s.width;
      Vec acc[kKernel][kRowVectors];
      for (std::int64_t ky = 0; ky < kKernel; ++ky) {
        for (std::size_t v = 0; v < kRowVectors; ++v) {
          acc[ky][v] = hn::Zero(d);
        }
      }
      for (std::int32_t i = 0; i < count; ++i) {
        const Vec g = hn::Set(d, value[i]);
        const float* window = plane + position[i];
        for (std::int64_t ky = 0; ky < kKernel; ++ky) {
          // lanes past the 5 taps read the row's next inputs and are dropped below
          for (std::size_t v = 0; v < kRowVectors; ++v) {
            acc[ky][v] = hn::MulAdd(
                g, hn::LoadU(d, window + ky * s.width + static_cast<std::int64_t>(v) * lanes),
                acc[ky][v]);
          }
        }
      }
      float* taps = grad_weight + (oc * s.in_channels + ic) * static_cast<std::int64_t>(kTaps);
      for (std::int64_t ky = 0; ky < kKernel; ++ky) {
        for (std::size_t v = 0; v < kRowVectors; ++v) {
          hn::Store(acc[ky][v], d, row_taps + static_cast<std::int64_t>(v) * lanes);
        }
        for (std::int64_t kx = 0; kx < kKernel; ++kx) {
          taps[ky * kKernel + kx] += row_taps[kx];
        }
      }
    }
  }
}

std::int32_t GatherPlaneGradients(const float* HWY_RESTRICT grad_out, const float* HWY_RESTRICT out,
                                  const std::uint8_t* HWY_RESTRICT winner,
                                  const std::int32_t* HWY_RESTRICT window_first,
                                  std::int64_t outputs, std::int32_t row_stride, bool compact,
                                  float* HWY_RESTRICT values,
                                  std::int32_t* HWY_RESTRICT positions) {
  std::int64_t i = 0;
  if (!compact) {  // every entry, the dropped ones with gradient 0: one vector of outputs at a time
    const Tag d;
    const hn::RebindToSigned<Tag> di;
    const hn::Rebind<std::uint8_t, decltype(di)> d8;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto zero = hn::Zero(d);
    const auto stride = hn::Set(di, row_stride);
    const auto one = hn::Set(di, 1);
    for (; i + lanes <= outputs; i += lanes) {
      const auto g = hn::LoadU(d, grad_out + i);
      const auto dropped = hn::Le(hn::LoadU(d, out + i), zero);  // ReLU's zero gradient; NaN kept
      hn::StoreU(hn::IfThenZeroElse(dropped, g), d, values + i);
      const auto at = hn::PromoteTo(di, hn::LoadU(d8, winner + i));
      hn::StoreU(hn::Add(hn::LoadU(di, window_first + i),
                         hn::Add(hn::Mul(hn::ShiftRight<1>(at), stride), hn::And(at, one))),
                 di, positions + i);
    }
  }
  // the rest (all of them where compact) one at a time, branch-free
  auto count = static_cast<std::int32_t>(i);
  for (; i < outputs; ++i) {
    const float g = out[i] <= 0.0F ? 0.0F : grad_out[i];
    values[count] = g;
    positions[count] = window_first[i] + (winner[i] >> 1) * row_stride + (winner[i] & 1);
    count += !compact || g != 0.0F ? 1 : 0;
  }
  return count;
}

std::int64_t VectorFloats() { return static_cast<std::int64_t>(hn::Lanes(Tag())); }

}  // namespace HWY_NAMESPACE
}  // namespace cflrun::model::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstdlib>
#include <string_view>

#include <hwy/targets.h>

namespace cflrun::model::simd {
namespace {

/// Keeps the vector loops to the instruction sets LibTorch's ATEN_CPU_CAPABILITY allows, so that
/// the variable that forces LibTorch's AVX2 (or plain) kernels on an AVX-512 machine forces
/// these too ("avx2": no AVX-512; "default": none past the baseline). Once, before any dispatch.
bool follow_aten_capability() {
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  const std::string_view wanted = capability == nullptr ? "" : capability;
  constexpr std::int64_t kAvx512 = HWY_AVX3 | HWY_AVX3_DL;
  if (wanted == "avx2") {
    hwy::DisableTargets(kAvx512);
  } else if (wanted == "default") {
    hwy::DisableTargets(kAvx512 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3);
  }
  return true;
}

void before_dispatch() { [[maybe_unused]] static const bool once = follow_aten_capability(); }

}  // namespace

HWY_EXPORT(ConvolveSample);
HWY_EXPORT(AddInputGradient);
HWY_EXPORT(VectorFloats);
HWY_EXPORT(AddSparseWeightGradient);
HWY_EXPORT(GatherPlaneGradients);

ConvShape conv_shape(std::int64_t in_channels, std::int64_t out_channels, std::int64_t height,
                     std::int64_t width) {
  ConvShape s{in_channels,          out_channels,        height, width,
              height - kKernel + 1, width - kKernel + 1, 0,      0};
  s.positions = (s.out_height * width + kPositionBlock - 1) / kPositionBlock * kPositionBlock;
  // the last position's last tap: (positions - 1) + (kKernel - 1) * (width + 1) in the last plane
  s.padded_input = (in_channels - 1) * height * width + s.positions + (kKernel - 1) * (width + 1) +
                   kWidestVector;
  return s;
}

void convolve_sample(const float* in, const ConvShape& s, const float* weight,
                     const float* packed_weight, const float* bias, float* out) {
  before_dispatch();
  HWY_DYNAMIC_DISPATCH(ConvolveSample)(in, s, weight, packed_weight, bias, out);
}

std::int64_t input_channel_stride(std::int64_t in_channels) {
  before_dispatch();
  const auto lanes = HWY_DYNAMIC_DISPATCH(VectorFloats)();
  return (in_channels + lanes - 1) / lanes * lanes;
}

void add_input_gradient(const float* grad_out, const ConvShape& s,
                        const float* channels_last_weight, std::int64_t stride, float* grad_in) {
  before_dispatch();
  HWY_DYNAMIC_DISPATCH(AddInputGradient)(grad_out, s, channels_last_weight, stride, grad_in);
}

void add_sparse_weight_gradient(const float* in, const ConvShape& s, const float* values,
                                const std::int32_t* positions, const std::int32_t* counts,
                                std::int64_t capacity, float* grad_weight, float* grad_bias) {
  before_dispatch();
  HWY_DYNAMIC_DISPATCH(AddSparseWeightGradient)
  (in, s, values, positions, counts, capacity, grad_weight, grad_bias);
}

std::int32_t gather_plane_gradients(const float* grad_out, const float* out,
                                    const std::uint8_t* winner, const std::int32_t* window_first,
                                    std::int64_t outputs, std::int32_t row_stride, bool compact,
                                    float* values, std::int32_t* positions) {
  before_dispatch();
  return HWY_DYNAMIC_DISPATCH(GatherPlaneGradients)(grad_out, out, winner, window_first, outputs,
                                                    row_stride, compact, values, positions);
}

}  // namespace cflrun::model::simd
#endif  // HWY_ONCE
