#include <cflrun/run/round_timeout.hpp>

#include <algorithm>

#include <cflrun/cli/run_choices.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {

RoundTimeout::RoundTimeout(const std::string& option) {
  if (const auto word = core::value_of(option, cli::kRoundTimeoutWords)) {
    automatic_ = *word == cli::RoundTimeoutWord::kAuto;
    return;
  }
  try {
    std::size_t used = 0;
    fixed_seconds_ = std::stod(option, &used);
    if (used == option.size() && fixed_seconds_ > 0.0) {
      return;
    }
  } catch (const std::exception&) {
  }
  throw ConfigError("--round-timeout: expected auto, off or a positive number of seconds, got '" +
                    option + "'");
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
