#pragma once
/// @file
/// The metrics a report can tabulate, with their names, units and print precision as in the
/// CLoVE paper's tables (Tables 1, 2, 4, 5; clove-official-setup.md Sec. 12).

#include <optional>
#include <string>
#include <vector>

#include <cflrun/report/run_summary.hpp>

namespace cflrun::report {

/// One per-run final metric (see RunMetrics for how each is computed).
enum class Metric {
  kAccuracy,          ///< final test accuracy, mean over clients, percent (Table 1).
  kAccuracyWeighted,  ///< final test accuracy, correct over test samples, percent (Table 1 rows
                      ///< of PFLlib and FlexCFL).
  kAccuracyTrain,     ///< last round's accuracy on the clients' training samples under the model
                      ///< the round starts from, mean over clients, percent (--train-accuracy; the
                      ///< CLoVE notebook's FedAvg row).
  kTestLoss,          ///< final test loss (Table 5, unsupervised runs).
  kAri,               ///< final ARI (Table 2).
  kAriRound10,        ///< ARI at round 10 as percent of the final ARI (Table 4, left).
  kFirstRoundAri09,   ///< first round (1-based) with ARI >= 0.9 (Table 4, right).
  kClusters,          ///< models the algorithm maintained in the last round (CFL's count grows).
  /// Rounds from a population change until a series recovers (`--recovery` tables,
  /// recovery.hpp): a per-change figure, not a per-run one, so outside all_metrics() and
  /// metric_value (nullopt); named here for its precision and its missing word, "never".
  kRecoveryRounds,
};

/// How a metric is named and printed.
struct MetricInfo {
  std::string name;          ///< command-line and CSV name, e.g. "first_round_ari_0.9".
  std::string title;         ///< column title, with the unit, e.g. "accuracy (%)".
  int decimals = 0;          ///< digits after the point in Markdown/LaTeX (as in the paper).
  std::string missing_word;  ///< what an undefined per-run value means: "never", "undefined".
};

/// Name, title, precision of `metric`.
const MetricInfo& metric_info(Metric metric);

/// Every per-run metric, in the order of the default table's columns (not kRecoveryRounds).
const std::vector<Metric>& all_metrics();

/// The metric named `name` (accuracy | accuracy_weighted | accuracy_train | test_loss | ari |
/// ari_round10 | first_round_ari_0.9 | clusters).
/// @throws ConfigError naming `name` and the accepted names.
Metric parse_metric(const std::string& name);

/// The value of `metric` for one run (nullopt where undefined).
std::optional<double> metric_value(const RunMetrics& metrics, Metric metric);

/// The metric to show for a group when `requested` is asked for: the final test loss replaces
/// accuracy for unsupervised runs (CLoVE paper Table 5); every other metric is itself.
Metric shown_metric(Metric requested, bool unsupervised);

}  // namespace cflrun::report
