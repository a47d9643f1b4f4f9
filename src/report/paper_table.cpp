#include <cflrun/report/paper_values.hpp>

#include <cmath>
#include <cstdio>

namespace cflrun::report {
namespace {

/// The seeds behind every cell of the paper (its Sec. 5.1: seeds 1, 2, 3).
constexpr int kPaperSeeds = 3;

const PaperValue* find_value(const std::vector<PaperValue>& values, const RunGroup& group,
                             Metric metric) {
  for (const auto& value : values) {
    if (value.metric == metric && value.partition == group.value("partition") &&
        value.dataset == group.value("dataset") && value.algorithm == group.value("algorithm")) {
      return &value;
    }
  }
  return nullptr;
}

/// cflrun's mean minus the paper's, signed, in the metric's print precision; "" if cflrun has none.
std::string difference(const Statistic& measured, const PaperValue& paper) {
  if (measured.defined == 0) {
    return "";
  }
  const int decimals = metric_info(paper.metric).decimals;
  double delta = measured.mean - paper.mean;
  const double unit = std::pow(10.0, -decimals);
  if (std::fabs(delta) < unit / 2) {
    delta = 0.0;  // print "+0.0", not "-0.0"
  }
  char text[32];
  std::snprintf(text, sizeof text, "%+.*f", decimals, delta);
  return text;
}

std::vector<Column> comparison_columns() {
  return {{"paper table", "table", false},
          {"partition", "partition", false},
          {"dataset", "dataset", false},
          {"algorithm", "algorithm", false},
          {"rounds", "rounds", false},
          {"metric", "metric", false},
          {"n", "n", false},
          {"cflrun", "cflrun", true},
          {"paper", "paper", true},
          {"difference", "difference", false}};
}

}  // namespace

Table paper_comparison_table(const std::vector<RunGroup>& groups,
                             const std::vector<PaperValue>& values, const std::string& source,
                             int& unmatched) {
  Table table;
  table.caption = {"cflrun beside the CLoVE paper (values: " + source +
                       "); mean +- std over seeds; difference = cflrun mean - paper mean",
                   ""};
  table.columns = comparison_columns();
  unmatched = 0;
  for (const auto& group : groups) {
    bool matched = false;
    for (const Metric metric : all_metrics()) {
      const PaperValue* paper = group.unsupervised() ? nullptr : find_value(values, group, metric);
      if (paper == nullptr) {
        continue;
      }
      matched = true;
      const Statistic measured = group.statistic(metric);
      const Statistic reference{paper->mean, paper->std, kPaperSeeds, kPaperSeeds};
      table.rows.push_back({paper->table, group.value("partition"), group.value("dataset"),
                            group.value("algorithm"), group.value("rounds"),
                            metric_info(metric).name, std::to_string(group.runs.size()),
                            StatisticCell{measured, metric, false},
                            StatisticCell{reference, metric, false}, difference(measured, *paper)});
    }
    unmatched += matched ? 0 : 1;
  }
  return table;
}

}  // namespace cflrun::report
