#include <cflrun/run/round_timeout.hpp>

#include <algorithm>

#include <cflrun/cli/run_choices.hpp>

namespace cflrun::run {

RoundTimeout::RoundTimeout(const std::string& option) {
  const auto seconds = cli::parse_round_timeout(option);
  automatic_ = !seconds.has_value();
  fixed_seconds_ = seconds.value_or(0.0);
}

void RoundTimeout::add_round(double seconds) {
  if (automatic_) {
    rounds_.push_back(seconds);
  }
}

double RoundTimeout::seconds() const {
  if (!automatic_) {
    return fixed_seconds_;
  }
  if (rounds_.empty()) {
    return kAutoFirstSeconds;
  }
  auto sorted = rounds_;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  return std::max(kAutoMinimumSeconds, kAutoMedianFactor * *middle);
}

}  // namespace cflrun::run
