#pragma once
/// @file
/// The watchdog's timeout for the coming round, from --round-timeout and the rounds so far.

#include <string>
#include <vector>

namespace cflrun::run {

/// --round-timeout as a policy: "off" (0 = never time out), a fixed number of seconds, or "auto":
/// kAutoFirstSeconds until the first round has ended, then max(kAutoMinimumSeconds,
/// kAutoMedianFactor x the median round time so far). Rank 0 waits this long in one collective
/// before it names the ranks that did not arrive (comm::Communicator::set_timeout).
class RoundTimeout {
 public:
  static constexpr double kAutoFirstSeconds = 1800.0;
  static constexpr double kAutoMinimumSeconds = 120.0;
  static constexpr double kAutoMedianFactor = 10.0;

  /// @param option the value of --round-timeout: "auto", "off" or a positive number of seconds.
  /// @throws ConfigError if `option` is none of these.
  explicit RoundTimeout(const std::string& option);

  /// Records one finished round's wall time in seconds (>= 0).
  void add_round(double seconds);

  /// The timeout in seconds for the next round; 0 means off.
  double seconds() const;

 private:
  bool automatic_ = false;
  double fixed_seconds_ = 0.0;
  std::vector<double> rounds_;  // wall seconds of the rounds so far
};

}  // namespace cflrun::run
