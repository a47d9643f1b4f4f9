#pragma once
// Private to src/run/population: the ground truth of every client in every round, moved by the
// --changes events.

#include <vector>

#include <cflrun/run/population/population_schedule.hpp>

namespace cflrun::run::detail {

/// The truth of every client in every round, and the round each client joins.
struct PopulationTruth {
  std::vector<std::vector<int>> truth;  ///< [T][M]
  std::vector<int> join_round;          ///< [M] 1-based round of a client's first presence.
  std::vector<int> change_rounds;       ///< 1-based, increasing, no repeats.
};

/// Event indices by round, events of one round in the order written.
std::vector<int> events_by_round(const std::vector<PopulationChange>& changes);

/// Applies spec.changes round by round (see PopulationSchedule's constructor).
/// @throws ConfigError as PopulationSchedule's constructor.
PopulationTruth population_truth(const PopulationSpec& spec);

}  // namespace cflrun::run::detail
