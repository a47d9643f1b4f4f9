#include <cflrun/report/paper_values.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include <boost/algorithm/string/predicate.hpp>

#include <cflrun/report/paper_references.hpp>

namespace cflrun::report {
namespace {

/// The seeds behind every cell of the paper (its Sec. 5.1: seeds 1, 2, 3).
constexpr int kPaperSeeds = 3;

/// The metrics of the paper's Tables 1, 2 and 5, which the summary counts and classes.
const Metric kSummaryMetrics[] = {Metric::kAccuracy, Metric::kAri, Metric::kTestLoss};

bool classed(Metric metric) {
  return std::find(std::begin(kSummaryMetrics), std::end(kSummaryMetrics), metric) !=
         std::end(kSummaryMetrics);
}

/// Whether `group` ran the cell of `value`: its partition, dataset and algorithm, unsupervised
/// for a test-loss cell (Table 5) and supervised for every other.
bool matches(const PaperValue& value, const RunGroup& group) {
  return value.partition == group.value("partition") && value.dataset == group.value("dataset") &&
         value.algorithm == group.value("algorithm") &&
         (value.metric == Metric::kTestLoss) == group.unsupervised();
}

const PaperValue* find_value(const std::vector<PaperValue>& values, const RunGroup& group,
                             Metric metric) {
  for (const auto& value : values) {
    if (value.metric == metric && matches(value, group)) {
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

/// What the accuracy of a row is: the reference code's definition, or why it is not.
std::string accuracy_words(const PaperValue& paper, Metric used,
                           const PaperReferences& references) {
  if (paper.metric != Metric::kAccuracy) {
    return "";
  }
  if (used == Metric::kAccuracyWeighted) {
    return "sample-weighted";
  }
  if (used == Metric::kAccuracyTrain) {
    return "training data";
  }
  switch (references.accuracy_of(paper.algorithm)) {
    case AccuracyDefinition::kSampleWeighted:
      return "client mean (weighted not recorded)";
    case AccuracyDefinition::kTrainingData:
      return "client mean (training data not recorded)";
    case AccuracyDefinition::kClientMean:
      break;
  }
  return "client mean";
}

std::vector<Column> comparison_columns() {
  return {{"paper table", "table", false},
          {"partition", "partition", false},
          {"dataset", "dataset", false},
          {"algorithm", "algorithm", false},
          {"rounds", "rounds", false},
          {"metric", "metric", false},
          {"accuracy as", "accuracy_as", false},
          {"n", "n", false},
          {"cflrun", "cflrun", true},
          {"paper", "paper", true},
          {"difference", "difference", false},
          {"class", "class", false}};
}

/// Whether every run of `group` recorded `metric` (the sample-weighted accuracy: runs of cflrun
/// since it did, whose per-run rows also carry their options; the training-data accuracy: runs
/// with --train-accuracy).
bool records(const RunGroup& group, Metric metric) {
  return group.statistic(metric).defined == static_cast<int>(group.runs.size());
}

/// Whether every run of `group` was built from committed code: its git_commit names a commit, not
/// a tree with uncommitted changes ("...-dirty", results/README.md) or nothing.
bool built_from_commits(const RunGroup& group) {
  return std::all_of(group.runs.begin(), group.runs.end(), [](const RunSummary& run) {
    const auto commit = run.config.find("git_commit");
    return commit != run.config.end() && !commit->second.empty() &&
           !boost::algorithm::ends_with(commit->second, "-dirty");
  });
}

/// The group that stands for the cell (partition, dataset, algorithm) of `value`: the one with the
/// most runs; of equals, one whose runs recorded the accuracy as the row's reference defines it
/// (definition_metric), then one whose runs recorded the sample-weighted accuracy, then one built
/// from committed code, else the first; null if none matches.
const RunGroup* cell_group(const std::vector<RunGroup>& groups, const PaperValue& value,
                           const PaperReferences& references) {
  const Metric defined_as = definition_metric(references.accuracy_of(value.algorithm));
  const auto rank = [&](const RunGroup& group) {
    return std::make_tuple(group.runs.size(), records(group, defined_as),
                           records(group, Metric::kAccuracyWeighted), built_from_commits(group));
  };
  const RunGroup* best = nullptr;
  for (const auto& group : groups) {
    if (matches(value, group) && (best == nullptr || rank(group) > rank(*best))) {
      best = &group;
    }
  }
  return best;
}

}  // namespace

Table paper_comparison_table(const std::vector<RunGroup>& groups,
                             const std::vector<PaperValue>& values,
                             const PaperReferences& references, const std::string& source,
                             int& unmatched) {
  Table table;
  table.caption = {"cflrun beside the CLoVE paper (values: " + source +
                       "); mean +- std over seeds; difference = cflrun mean - paper mean; "
                       "accuracy as the row's reference code computes it",
                   ""};
  table.columns = comparison_columns();
  unmatched = 0;
  int left_out = 0;
  for (const auto& group : groups) {
    bool matched = false;
    for (const Metric metric : all_metrics()) {
      const PaperValue* paper = find_value(values, group, metric);
      if (paper == nullptr) {
        continue;
      }
      matched = true;
      if (cell_group(groups, *paper, references) != &group) {
        ++left_out;
        continue;
      }
      Metric used = metric;
      const Statistic measured = measured_for(group, *paper, references, used);
      const Statistic reference{paper->mean, paper->std, kPaperSeeds, kPaperSeeds};
      table.rows.push_back(
          {paper->table, group.value("partition"), group.value("dataset"), group.value("algorithm"),
           group.value("rounds"), metric_info(metric).name,
           accuracy_words(*paper, used, references), std::to_string(group.runs.size()),
           StatisticCell{measured, used, false}, StatisticCell{reference, metric, false},
           difference(measured, *paper),
           classed(metric) ? cell_class_name(classify(measured, *paper, references)) : ""});
    }
    unmatched += matched ? 0 : 1;
  }
  if (left_out > 0) {
    table.caption.insert(table.caption.end() - 1,
                         std::to_string(left_out) +
                             " value(s) of other groups of the same cells left out: a cell shows "
                             "its group with the most runs (of equals, one that recorded the "
                             "sample-weighted accuracy, then one built from committed code)");
  }
  return table;
}

Table paper_summary_table(const std::vector<RunGroup>& groups,
                          const std::vector<PaperValue>& values, const PaperReferences& references,
                          const std::string& source) {
  Table table;
  table.caption = {
      "The CLoVE paper's Tables 1 (accuracy), 2 (ARI) and 5 (unsupervised test loss), cells per "
      "class (values: " +
          source + "); within: " + within_rule_text(),
      ""};
  table.columns = {
      {"dataset", "dataset", false}, {"metric", "metric", false}, {"cells", "cells", false}};
  const CellClass classes[] = {CellClass::kWithin, CellClass::kOutsideWithEvidence,
                               CellClass::kOutside, CellClass::kMissing};
  for (const CellClass cell_class : classes) {
    table.columns.push_back({cell_class_name(cell_class), cell_class_name(cell_class), false});
  }
  std::vector<std::string> datasets;  // in the order of the values
  for (const auto& value : values) {
    if (std::find(datasets.begin(), datasets.end(), value.dataset) == datasets.end()) {
      datasets.push_back(value.dataset);
    }
  }
  for (const auto& dataset : datasets) {
    for (const Metric metric : kSummaryMetrics) {
      std::map<CellClass, int> counts;
      int cells = 0;
      for (const auto& value : values) {
        if (value.dataset != dataset || value.metric != metric) {
          continue;
        }
        ++cells;
        const RunGroup* group = cell_group(groups, value, references);
        Metric used = metric;
        counts[group == nullptr
                   ? CellClass::kMissing
                   : classify(measured_for(*group, value, references, used), value, references)]++;
      }
      if (cells == 0) {
        continue;
      }
      std::vector<Cell> row{dataset, metric_info(metric).name, std::to_string(cells)};
      for (const CellClass cell_class : classes) {
        row.push_back(std::to_string(counts[cell_class]));
      }
      table.rows.push_back(row);
    }
  }
  return table;
}

}  // namespace cflrun::report
