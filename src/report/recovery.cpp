#include <cflrun/report/recovery.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include <cflrun/core/error.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/report/run_summary.hpp>

namespace cflrun::report {
namespace {

/// Slack below the accuracy target so that a value exactly one point below the level before
/// counts as recovered despite rounding (in binary, 0.13 - 0.01 > 0.12).
constexpr double kRoundingSlack = 1e-12;

/// Rounds from index `from` of `series` until a value >= `target`; undefined if no value from
/// `from` on is finite.
RecoveryRounds rounds_until(const std::vector<double>& series, std::size_t from, double target) {
  RecoveryRounds result;
  for (std::size_t t = from; t < series.size(); ++t) {
    if (!std::isfinite(series[t])) {
      continue;
    }
    if (series[t] >= target) {
      return {RecoveryState::kRecovered, static_cast<int>(t - from)};
    }
    result.state = RecoveryState::kNever;
  }
  return result;
}

std::optional<double> finite_at(const std::vector<double>& series, std::size_t index) {
  if (index >= series.size() || !std::isfinite(series[index])) {
    return std::nullopt;
  }
  return series[index];
}

/// Minimum finite value of `series` over indices [from, to).
std::optional<double> finite_minimum(const std::vector<double>& series, std::size_t from,
                                     std::size_t to) {
  std::optional<double> minimum;
  for (std::size_t t = from; t < std::min(to, series.size()); ++t) {
    if (std::isfinite(series[t]) && (!minimum || series[t] < *minimum)) {
      minimum = series[t];
    }
  }
  return minimum;
}

void check_change_rounds(const std::vector<int>& change_rounds) {
  for (std::size_t c = 0; c < change_rounds.size(); ++c) {
    const int previous = c == 0 ? 0 : change_rounds[c - 1];
    if (change_rounds[c] <= previous) {
      throw DataError("change rounds must be 1-based and strictly increasing, but entry " +
                      std::to_string(c) + " is " + std::to_string(change_rounds[c]) +
                      (c == 0 ? "" : " after " + std::to_string(previous)) +
                      " (/population/change_rounds of a damaged or foreign file?)");
    }
  }
}

/// The recovery after the change at `change_round`; the dip runs up to round `dip_end` - 1
/// (the next change round, or one past the series).
ChangeRecovery recovery_after(int change_round, std::size_t dip_end, const std::vector<double>& ari,
                              const std::vector<double>& accuracy) {
  const auto at = static_cast<std::size_t>(change_round - 1);  // 0-based row of round r
  ChangeRecovery recovery;
  recovery.change_round = change_round;
  recovery.ari = rounds_until(ari, at, kAriThreshold);
  if (change_round > 1) {
    recovery.ari_before = finite_at(ari, at - 1);
    recovery.accuracy_before = finite_at(accuracy, at - 1);
  }
  recovery.ari_after = finite_at(ari, at);
  if (recovery.accuracy_before) {
    recovery.accuracy = rounds_until(
        accuracy, at, *recovery.accuracy_before - kAccuracyRecoveryTolerance - kRoundingSlack);
  }
  recovery.accuracy_after = finite_at(accuracy, at);
  recovery.accuracy_dip = finite_minimum(accuracy, at, dip_end);
  return recovery;
}

}  // namespace

std::vector<ChangeRecovery> compute_recoveries(const std::vector<int>& change_rounds,
                                               const std::vector<double>& ari,
                                               const std::vector<double>& accuracy) {
  check_change_rounds(change_rounds);
  std::vector<ChangeRecovery> recoveries;
  for (std::size_t c = 0; c < change_rounds.size(); ++c) {
    const std::size_t dip_end = c + 1 < change_rounds.size()
                                    ? static_cast<std::size_t>(change_rounds[c + 1] - 1)
                                    : accuracy.size();
    recoveries.push_back(recovery_after(change_rounds[c], dip_end, ari, accuracy));
  }
  return recoveries;
}

std::vector<int> read_change_rounds(const io::ResultReader& reader) {
  if (!reader.has_dataset(io::schema::kChangeRounds)) {
    return {};
  }
  return reader.read_i32(io::schema::kChangeRounds);
}

}  // namespace cflrun::report
