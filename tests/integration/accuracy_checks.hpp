#pragma once
// Checks of how a result file's accuracies are defined (see check_results.cpp for the CLI).

#include <string>

namespace cflrun::checks {

/// Every round's /rounds/accuracy_weighted is the participants' correct test samples over their
/// test samples, recomputed here from /clients/accuracy and the given test sample counts, within
/// 1e-6; /summary final_accuracy_weighted is the last round's; and in some round it differs from
/// the client mean /rounds/accuracy by more than 1e-4 (the counts must differ for this check).
/// @param counts  each client's test samples, clients in order, as `N` or `NxREPEAT` items
///                separated by commas, e.g. "375x5,463x5".
/// Returns 0 on success, 1 (after printing) else.
int accuracy_weighted(const std::string& file, const std::string& counts);

/// /rounds/accuracy_train (--train-accuracy) of `file`: one value per finished round, each in
/// [0, 1]; every round within `tolerance` of `twin`'s (the same run on another rank layout); the
/// first round's (the initial model's) below the last's, and the last >= `min_last`.
/// Returns 0 on success, 1 (after printing) else.
int train_accuracy(const std::string& file, const std::string& twin, double tolerance,
                   double min_last);

}  // namespace cflrun::checks
