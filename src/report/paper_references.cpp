// The accuracy definitions and evidence beside paper_values.csv, and the class of a cell.
#include <cflrun/report/paper_references.hpp>

#include "csv_rows.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

namespace fs = std::filesystem;

AccuracyDefinition parse_definition(const std::string& text, const std::string& where) {
  if (text == "client_mean") {
    return AccuracyDefinition::kClientMean;
  }
  if (text == "sample_weighted") {
    return AccuracyDefinition::kSampleWeighted;
  }
  if (text == "training_data") {
    return AccuracyDefinition::kTrainingData;
  }
  throw DataError(where +
                  ": accuracy must be client_mean, sample_weighted or training_data, but "
                  "got '" +
                  text + "'");
}

}  // namespace

Metric definition_metric(AccuracyDefinition definition) {
  switch (definition) {
    case AccuracyDefinition::kSampleWeighted:
      return Metric::kAccuracyWeighted;
    case AccuracyDefinition::kTrainingData:
      return Metric::kAccuracyTrain;
    case AccuracyDefinition::kClientMean:
      break;
  }
  return Metric::kAccuracy;
}

const char* cell_class_name(CellClass cell_class) {
  switch (cell_class) {
    case CellClass::kWithin:
      return "within";
    case CellClass::kOutsideWithEvidence:
      return "outside with evidence";
    case CellClass::kOutside:
      return "outside";
    case CellClass::kMissing:
      return "missing";
  }
  return "";
}

std::string cell_key(const PaperValue& cell) {
  return metric_info(cell.metric).name + "/" + cell.partition + "/" + cell.dataset + "/" +
         cell.algorithm;
}

AccuracyDefinition PaperReferences::accuracy_of(const std::string& algorithm) const {
  const auto it = accuracy.find(algorithm);
  return it == accuracy.end() ? AccuracyDefinition::kClientMean : it->second;
}

std::string PaperReferences::evidence_for(const PaperValue& cell) const {
  const auto it = evidence.find(cell_key(cell));
  return it == evidence.end() ? "" : it->second;
}

PaperReferences read_paper_references(const fs::path& values_path) {
  PaperReferences references;
  const auto directory = values_path.parent_path();
  detail::for_each_csv_row(directory / kAccuracyDefinitionsFile, "algorithm,accuracy,source",
                           [&](const std::vector<std::string>& f, const std::string& where) {
                             references.accuracy[f[0]] = parse_definition(f[1], where);
                           });
  detail::for_each_csv_row(directory / kEvidenceFile, "metric,partition,dataset,algorithm,evidence",
                           [&](const std::vector<std::string>& f, const std::string& where) {
                             PaperValue cell;
                             cell.metric = detail::parse_metric_field(f[0], where);
                             cell.partition = f[1];
                             cell.dataset = f[2];
                             cell.algorithm = f[3];
                             references.evidence[cell_key(cell)] = f[4];
                           });
  return references;
}

Statistic measured_for(const RunGroup& group, const PaperValue& cell,
                       const PaperReferences& references, Metric& used) {
  used = cell.metric;
  if (cell.metric == Metric::kAccuracy) {
    const Metric defined_as = definition_metric(references.accuracy_of(cell.algorithm));
    const Statistic as_reference = group.statistic(defined_as);
    if (as_reference.defined > 0) {
      used = defined_as;
      return as_reference;
    }
  }
  return group.statistic(cell.metric);
}

std::string within_rule_text() {
  std::ostringstream text;
  text << "accuracy: |cflrun - paper| <= max(" << kAccuracyTolerancePoints
       << " points, the paper's std); ARI: <= " << kAriTolerance << "; test loss: <= max("
       << kTestLossToleranceFraction * 100 << " % of the paper's value, its std)";
  return text.str();
}

CellClass classify(const Statistic& measured, const PaperValue& cell,
                   const PaperReferences& references) {
  if (measured.defined == 0) {
    return CellClass::kMissing;
  }
  // As printed: the mean at the paper's precision (accuracy 99.1, ARI 1.00), so that a difference
  // shown as 2.0 is within a tolerance of 2.0.
  const double unit = std::pow(10.0, -metric_info(cell.metric).decimals);
  const double difference = std::fabs(std::round(measured.mean / unit) * unit - cell.mean);
  const bool within =
      (cell.metric == Metric::kAccuracy &&
       difference <= std::max(kAccuracyTolerancePoints, cell.std) + unit / 2) ||
      (cell.metric == Metric::kAri && difference <= kAriTolerance + unit / 2) ||
      (cell.metric == Metric::kTestLoss &&
       difference <= std::max(kTestLossToleranceFraction * cell.mean, cell.std) + unit / 2);
  if (within) {
    return CellClass::kWithin;
  }
  return references.evidence_for(cell).empty() ? CellClass::kOutside
                                               : CellClass::kOutsideWithEvidence;
}

}  // namespace cflrun::report
