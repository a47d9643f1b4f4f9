#pragma once
/// @file
/// The one line per round that rank 0 prints.

#include <string>

namespace cflrun::run {

/// Formats "round   3/100  ARI 1.000  accuracy 0.9712  test loss 0.0812  1.23 s  ETA 2m01s".
/// @param round          1-based round number.
/// @param rounds         T.
/// @param ari            NaN prints as "-".
/// @param accuracy       fraction in [0, 1].
/// @param seconds        wall-clock seconds of this round.
/// @param mean_seconds   mean seconds per round so far, for the ETA of the remaining rounds.
std::string progress_line(int round, int rounds, double ari, double accuracy, double test_loss,
                          double seconds, double mean_seconds);

}  // namespace cflrun::run
