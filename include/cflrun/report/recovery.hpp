#pragma once
/// @file
/// How a run recovers from each change of a changing population (issue 45): the rounds from a
/// change until the clustering (ARI) and the accuracy are back, and the accuracy before, at and
/// after the change. `cflrun report --recovery` tabulates it (recovery_table.hpp).

#include <optional>
#include <vector>

namespace cflrun::io {
class ResultReader;
}

namespace cflrun::report {

/// Accuracy counts as recovered within this much of its level before the change, as a fraction
/// (1 accuracy point).
inline constexpr double kAccuracyRecoveryTolerance = 0.01;

/// Whether a series came back after a change.
enum class RecoveryState {
  kRecovered,  ///< it reached its target; RecoveryRounds::rounds says when.
  kNever,      ///< it has values after the change but none reaches the target by the run's end.
  kUndefined,  ///< there is nothing to judge: no finite value from the change round on (ARI of
               ///< an algorithm without clusters), no accuracy before the change (a change at
               ///< round 1), or the change lies after the run's last round.
};

/// Rounds from a change until a series is back at its target.
struct RecoveryRounds {
  RecoveryState state = RecoveryState::kUndefined;
  int rounds = 0;  ///< d >= 0 (0: at the change round itself) when kRecovered, else 0.
};

/// One change of a run's population and how the run fared after it. Accuracies are fractions in
/// [0, 1] as in /rounds/accuracy (mean over the clients present); nullopt where undefined.
struct ChangeRecovery {
  int change_round = 0;  ///< r, 1-based: the first round with the changed population.
  /// Smallest d >= 0 with ARI(r + d) >= kAriThreshold; searched up to the run's last round,
  /// across later changes. kUndefined if ARI is NaN in every round from r on.
  RecoveryRounds ari;
  /// Smallest d >= 0 with accuracy(r + d) >= accuracy_before - kAccuracyRecoveryTolerance,
  /// searched as `ari`. kUndefined if accuracy_before is, or accuracy is NaN from r on.
  RecoveryRounds accuracy;
  /// ARI of round r - 1 and of round r (nullopt where NaN, or r == 1): a recovery means little
  /// where the ARI was below the threshold before the change too.
  std::optional<double> ari_before;
  std::optional<double> ari_after;
  std::optional<double> accuracy_before;  ///< accuracy of round r - 1; nullopt if r == 1.
  std::optional<double> accuracy_after;   ///< accuracy of round r, the change round itself.
  /// Minimum accuracy over rounds r .. (the next change round - 1, or the last round), NaN
  /// rounds skipped; nullopt if none of them is finite.
  std::optional<double> accuracy_dip;
};

/// The recovery after each change of one run, from its per-round series (row t = round t + 1).
/// NaN values never reach a target and are skipped by the dip.
/// @param change_rounds  [C] 1-based change rounds, strictly increasing
/// (/population/change_rounds);
///                       a change round beyond the series leaves everything of it undefined.
/// @param ari            [T] ARI per round over the clients present, NaN where undefined.
/// @param accuracy       [T] mean test accuracy per round over the clients present, fraction;
///                       may hold NaN (unsupervised runs) or be shorter than `ari`.
/// @return               [C] one entry per change round, in the order given.
/// @throws DataError if a change round is below 1 or the rounds do not increase.
std::vector<ChangeRecovery> compute_recoveries(const std::vector<int>& change_rounds,
                                               const std::vector<double>& ari,
                                               const std::vector<double>& accuracy);

/// /population/change_rounds of a result file: [C] int32, the 1-based rounds at which its
/// population changes (results/README.md); empty for a file without the dataset (a fixed
/// population, or a file written before issue 45) or with an empty one.
/// @throws Hdf5Error if the dataset exists but cannot be read.
std::vector<int> read_change_rounds(const io::ResultReader& reader);

}  // namespace cflrun::report
