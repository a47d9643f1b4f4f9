#pragma once
// Checks of the CLoVE variants' effects on real result files (see check_results.cpp for the CLI).

#include <string>

namespace cflrun::checks {

/// The run switched to per-cluster FedAvg by round `max_round` (1-based): from the switch round on
/// no loss vectors were sent (NaN rows), the server sent fewer bytes than in the round before, and
/// every client kept the model of the round before. Returns 0 on success, 1 (after printing) else.
int stability_switch(const std::string& file, int max_round);

/// The final mean test loss of `a` is at most that of `b` (Table 5: CLoVE <= IFCA).
int test_loss_at_most(const std::string& a, const std::string& b);

/// The final mean test loss is at most `max`.
int final_test_loss_below(const std::string& file, double max);

/// The last round's assignment uses exactly `expected` distinct models (unknown K).
int models_used(const std::string& file, int expected);

/// /rounds/bytes_sent of `round` (1-based) equals `expected` (weight sharing sends one shared
/// copy).
int bytes_sent(const std::string& file, int round, double expected);

}  // namespace cflrun::checks
