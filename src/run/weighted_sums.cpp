#include "weighted_sums.hpp"

#include <map>

namespace cflrun::run {
namespace {

/// The bits of row s of `weights` [K, M] float64 contiguous: equal rows, equal keys (-0.0 and NaN
/// included, unlike ==).
std::vector<std::uint64_t> row_bits(const torch::Tensor& weights, std::int64_t s) {
  const auto m = weights.size(1);
  const auto* row = reinterpret_cast<const std::uint64_t*>(weights.data_ptr<double>() + s * m);
  return {row, row + m};
}

}  // namespace

WeightedSums::WeightedSums(const torch::Tensor& weights, std::int64_t p)
    : weights_(weights.to(torch::kFloat64).contiguous()), p_(p) {
  const auto k = weights_.size(0);
  std::map<std::vector<std::uint64_t>, std::int64_t> first_with;
  for (std::int64_t s = 0; s < k; ++s) {
    const auto [found, inserted] = first_with.emplace(row_bits(weights_, s), s);
    first_equal_.push_back(found->second);
    if (inserted) {
      distinct_.push_back(s);
    }
  }
  sums_ = torch::zeros({k * p + k}, torch::kFloat64);
}

void WeightedSums::add(int client, const torch::Tensor& result) {
  const auto k = weights_.size(0);
  const auto m = weights_.size(1);
  const auto* w = weights_.data_ptr<double>();
  auto* totals = sums_.data_ptr<double>() + k * p_;
  for (const auto s : distinct_) {
    const double weight = w[s * m + client];
    if (weight > 0.0) {
      sums_.narrow(0, s * p_, p_).add_(result, weight);
      totals[s] += weight;
    }
  }
}

std::vector<double> WeightedSums::values() const {
  if (!sums_.defined()) {
    return {};
  }
  std::vector<double> values(sums_.data_ptr<double>(), sums_.data_ptr<double>() + sums_.numel());
  const auto k = static_cast<std::int64_t>(first_equal_.size());
  for (std::int64_t s = 0; s < k; ++s) {
    const auto first = first_equal_[static_cast<std::size_t>(s)];
    if (first != s) {
      std::copy_n(values.begin() + first * p_, p_, values.begin() + s * p_);
      values[static_cast<std::size_t>(k * p_ + s)] =
          values[static_cast<std::size_t>(k * p_ + first)];
    }
  }
  return values;
}

}  // namespace cflrun::run
