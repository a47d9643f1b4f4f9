// The fused convolution's weight gradient from its listed output gradients (conv_kernels_simd.hpp):
// listing every output (zeros where ReLU or the gradient drops it) and listing only the nonzero
// ones give the same floats, as gather_plane_gradients promises; the list itself is checked
// against the pooling's definition.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "model/conv_kernels_simd.hpp"

namespace cflrun::model::simd {
namespace {

struct Listed {
  std::vector<float> values;
  std::vector<std::int32_t> positions, counts;
};

constexpr std::int64_t kPooledSide = 12;
constexpr std::int64_t kOutputs = kPooledSide * kPooledSide;

/// Each output channel's entries of one sample (grad_out, out, winners [out_channels, 144]).
Listed listed(const ConvShape& s, const float* grad_out, const float* out,
              const std::uint8_t* winners, bool compact) {
  std::vector<std::int32_t> window_first(kOutputs);
  for (std::int64_t i = 0; i < kOutputs; ++i) {
    window_first[i] =
        static_cast<std::int32_t>(2 * (i / kPooledSide) * s.width + 2 * (i % kPooledSide));
  }
  Listed list{std::vector<float>(s.out_channels * kOutputs),
              std::vector<std::int32_t>(s.out_channels * kOutputs),
              std::vector<std::int32_t>(s.out_channels)};
  for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
    const auto at = oc * kOutputs;
    list.counts[oc] =
        gather_plane_gradients(grad_out + at, out + at, winners + at, window_first.data(), kOutputs,
                               static_cast<std::int32_t>(s.width), compact, list.values.data() + at,
                               list.positions.data() + at);
  }
  return list;
}

TEST(SparseWeightGradient, ListingEveryOutputOrTheNonzeroOnesGivesTheSameFloats) {
  torch::manual_seed(5);
  const auto s = conv_shape(2, 6, 28, 28);
  auto input = torch::zeros({s.padded_input});
  input.narrow(0, 0, 2 * 28 * 28).copy_(torch::randn({2 * 28 * 28}));
  auto grad_out = torch::randn({s.out_channels, kOutputs});
  grad_out.index_put_({grad_out.abs() < 0.3}, 0.0F);          // some gradients exactly 0
  const auto out = torch::randn({s.out_channels, kOutputs});  // about half <= 0: ReLU drops them
  const auto winners = torch::randint(0, 4, {s.out_channels, kOutputs}, torch::kUInt8);

  std::vector<torch::Tensor> weight_gradients, bias_gradients;
  for (const bool compact : {false, true}) {
    const auto list = listed(s, grad_out.data_ptr<float>(), out.data_ptr<float>(),
                             winners.data_ptr<std::uint8_t>(), compact);
    for (std::int64_t oc = 0; oc < s.out_channels; ++oc) {
      const auto kept = ((out[oc] > 0) & (grad_out[oc] != 0)).sum().item<std::int32_t>();
      EXPECT_EQ(list.counts[oc], compact ? kept : kOutputs) << "channel " << oc;
      // an entry: the output's gradient (0 where dropped) at its window winner's flat position
      const auto i = kOutputs - 1;  // the last window: row 11, column 11
      const auto winner = winners[oc][i].item<int>();
      if (!compact) {
        EXPECT_EQ(list.positions[oc * kOutputs + i],
                  22 * 28 + 22 + (winner >> 1) * 28 + (winner & 1));
        EXPECT_EQ(list.values[oc * kOutputs + i],
                  out[oc][i].item<float>() <= 0 ? 0.0F : grad_out[oc][i].item<float>());
      }
    }
    auto grad_weight = torch::zeros({s.out_channels, s.in_channels, 5, 5});
    auto grad_bias = torch::zeros({s.out_channels});
    add_sparse_weight_gradient(input.data_ptr<float>(), s, list.values.data(),
                               list.positions.data(), list.counts.data(), kOutputs,
                               grad_weight.data_ptr<float>(), grad_bias.data_ptr<float>());
    weight_gradients.push_back(grad_weight);
    bias_gradients.push_back(grad_bias);
  }
  EXPECT_TRUE(torch::equal(weight_gradients[0], weight_gradients[1]));
  EXPECT_TRUE(torch::equal(bias_gradients[0], bias_gradients[1]));
  EXPECT_GT(weight_gradients[0].abs().sum().item<float>(), 0.0F);
}

}  // namespace
}  // namespace cflrun::model::simd
