#include <cflrun/report/metric.hpp>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

// Precision as printed in the CLoVE paper: accuracy 99.1, test loss 0.014, ARI 1.00, Table 4
// 100.0 and 2.3.
const MetricInfo kAccuracyInfo{"accuracy", "accuracy (%)", 1, "undefined"};
const MetricInfo kAccuracyWeightedInfo{"accuracy_weighted", "sample-weighted accuracy (%)", 1,
                                       "undefined"};
const MetricInfo kAccuracyTrainInfo{"accuracy_train", "training-data accuracy (%)", 1, "undefined"};
const MetricInfo kTestLossInfo{"test_loss", "test loss", 3, "undefined"};
const MetricInfo kAriInfo{"ari", "ARI", 2, "undefined"};
const MetricInfo kAriRound10Info{"ari_round10", "ARI round 10 (% of final)", 1, "undefined"};
const MetricInfo kFirstRoundInfo{"first_round_ari_0.9", "first round ARI >= 0.9", 1, "never"};
const MetricInfo kClustersInfo{"clusters", "clusters", 1, "unrecorded"};
const MetricInfo kRecoveryRoundsInfo{"recovery_rounds", "recovery rounds", 1, "never"};

}  // namespace

const MetricInfo& metric_info(Metric metric) {
  switch (metric) {
    case Metric::kAccuracy:
      return kAccuracyInfo;
    case Metric::kAccuracyWeighted:
      return kAccuracyWeightedInfo;
    case Metric::kAccuracyTrain:
      return kAccuracyTrainInfo;
    case Metric::kTestLoss:
      return kTestLossInfo;
    case Metric::kAri:
      return kAriInfo;
    case Metric::kAriRound10:
      return kAriRound10Info;
    case Metric::kFirstRoundAri09:
      return kFirstRoundInfo;
    case Metric::kClusters:
      return kClustersInfo;
    case Metric::kRecoveryRounds:
      return kRecoveryRoundsInfo;
  }
  throw ConfigError("unknown report metric");
}

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> metrics{
      Metric::kAccuracy, Metric::kAccuracyWeighted, Metric::kAccuracyTrain,   Metric::kTestLoss,
      Metric::kAri,      Metric::kAriRound10,       Metric::kFirstRoundAri09, Metric::kClusters};
  return metrics;
}

Metric parse_metric(const std::string& name) {
  std::string names;
  for (const Metric metric : all_metrics()) {
    if (metric_info(metric).name == name) {
      return metric;
    }
    names += (names.empty() ? "" : " | ") + metric_info(metric).name;
  }
  throw ConfigError("--metric must be one of " + names + ", but got '" + name + "'");
}

std::optional<double> metric_value(const RunMetrics& metrics, Metric metric) {
  switch (metric) {
    case Metric::kAccuracy:
      return metrics.accuracy_percent;
    case Metric::kAccuracyWeighted:
      return metrics.accuracy_weighted_percent;
    case Metric::kAccuracyTrain:
      return metrics.accuracy_train_percent;
    case Metric::kTestLoss:
      return metrics.test_loss;
    case Metric::kAri:
      return metrics.ari;
    case Metric::kAriRound10:
      return metrics.ari_round10_percent;
    case Metric::kFirstRoundAri09:
      return metrics.first_round_ari_0_9;
    case Metric::kClusters:
      return metrics.clusters;
    case Metric::kRecoveryRounds:
      return std::nullopt;  // per change, not per run: RunSummary::recoveries
  }
  return std::nullopt;
}

Metric shown_metric(Metric requested, bool unsupervised) {
  return requested == Metric::kAccuracy && unsupervised ? Metric::kTestLoss : requested;
}

}  // namespace cflrun::report
