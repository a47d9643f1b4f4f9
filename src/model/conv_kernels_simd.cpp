// The vector loops of conv_kernels_simd.hpp in Google Highway: foreach_target.h compiles this file
// once per instruction set, HWY_DYNAMIC_DISPATCH picks the best the CPU has on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "model/conv_kernels_simd.cpp"
#include <hwy/foreach_target.h>  // before highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>

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
/// Output channels per block of the weight gradient: 4 x 5 accumulators + 4 gradients + 1 input
/// fit 32 registers; 2 x 5 + 2 + 1 fit 16.
constexpr std::size_t kGradientBlock = kManyRegisters ? 4 : 2;
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

/// The weight gradient of kOut output channels (grad_out and grad_weight at the first of them)
/// for input channel ic, kernel row ky: one accumulator per channel and kx, summed at the end.
template <std::size_t kOut>
HWY_INLINE void add_row_gradient(const float* HWY_RESTRICT in, const ConvShape& s,
                                 const float* HWY_RESTRICT grad_out, std::int64_t ic,
                                 std::int64_t ky, float* HWY_RESTRICT grad_weight) {
  const Tag d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  Vec acc[kOut][kKernel];
  for (std::size_t o = 0; o < kOut; ++o) {
    for (std::int64_t kx = 0; kx < kKernel; ++kx) {
      acc[o][kx] = hn::Zero(d);
    }
  }
  const float* src = in + ic * s.height * s.width + ky * s.width;
  for (std::int64_t p = 0; p < s.positions; p += lanes) {
    Vec g[kOut];
    for (std::size_t o = 0; o < kOut; ++o) {
      g[o] = hn::LoadU(d, grad_out + static_cast<std::int64_t>(o) * s.positions + p);
    }
    for (std::int64_t kx = 0; kx < kKernel; ++kx) {
      const Vec x = hn::LoadU(d, src + p + kx);
      for (std::size_t o = 0; o < kOut; ++o) {
        acc[o][kx] = hn::MulAdd(g[o], x, acc[o][kx]);
      }
    }
  }
  const auto weight_stride = s.in_channels * static_cast<std::int64_t>(kTaps);
  for (std::size_t o = 0; o < kOut; ++o) {
    float* row = grad_weight + static_cast<std::int64_t>(o) * weight_stride +
                 ic * static_cast<std::int64_t>(kTaps) + ky * kKernel;
    for (std::int64_t kx = 0; kx < kKernel; ++kx) {
      row[kx] += hn::GetLane(hn::SumOfLanes(d, acc[o][kx]));
    }
  }
}

template <std::size_t kOut>
HWY_INLINE void add_channels_gradient(const float* HWY_RESTRICT in, const ConvShape& s,
                                      const float* HWY_RESTRICT grad_out,
                                      float* HWY_RESTRICT grad_weight) {
  for (std::int64_t ic = 0; ic < s.in_channels; ++ic) {
    for (std::int64_t ky = 0; ky < kKernel; ++ky) {
      add_row_gradient<kOut>(in, s, grad_out, ic, ky, grad_weight);
    }
  }
}

void AddWeightGradient(const float* HWY_RESTRICT in, const ConvShape& s,
                       const float* HWY_RESTRICT grad_out, float* HWY_RESTRICT grad_weight,
                       float* HWY_RESTRICT grad_bias) {
  const Tag d;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto weight_stride = s.in_channels * static_cast<std::int64_t>(kTaps);
  for (std::int64_t oc = 0; oc < s.out_channels; oc += static_cast<std::int64_t>(kGradientBlock)) {
    const float* g = grad_out + oc * s.positions;
    float* gw = grad_weight + oc * weight_stride;
    if (s.out_channels - oc >= static_cast<std::int64_t>(kGradientBlock)) {
      add_channels_gradient<kGradientBlock>(in, s, g, gw);
    } else {
      for (std::int64_t o = oc; o < s.out_channels; ++o) {
        add_channels_gradient<1>(in, s, grad_out + o * s.positions,
                                 grad_weight + o * weight_stride);
      }
    }
  }
  for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
    Vec sum = hn::Zero(d);
    for (std::int64_t p = 0; p < s.positions; p += lanes) {
      sum = hn::Add(sum, hn::LoadU(d, grad_out + oc * s.positions + p));
    }
    grad_bias[oc] += hn::GetLane(hn::SumOfLanes(d, sum));
  }
}

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
HWY_EXPORT(AddWeightGradient);

ConvShape conv_shape(std::int64_t in_channels, std::int64_t out_channels, std::int64_t height,
                     std::int64_t width) {
  ConvShape s{in_channels,          out_channels,        height, width,
              height - kKernel + 1, width - kKernel + 1, 0,      0};
  s.positions = (s.out_height * width + kPositionBlock - 1) / kPositionBlock * kPositionBlock;
  // the last position's last tap: (positions - 1) + (kKernel - 1) * (width + 1) in the last plane
  s.padded_input = (in_channels - 1) * height * width + s.positions + (kKernel - 1) * (width + 1);
  return s;
}

void convolve_sample(const float* in, const ConvShape& s, const float* weight,
                     const float* packed_weight, const float* bias, float* out) {
  before_dispatch();
  HWY_DYNAMIC_DISPATCH(ConvolveSample)(in, s, weight, packed_weight, bias, out);
}

void add_weight_gradient(const float* in, const ConvShape& s, const float* grad_out,
                         float* grad_weight, float* grad_bias) {
  before_dispatch();
  HWY_DYNAMIC_DISPATCH(AddWeightGradient)(in, s, grad_out, grad_weight, grad_bias);
}

}  // namespace cflrun::model::simd
#endif  // HWY_ONCE
