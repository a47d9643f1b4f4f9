#pragma once
/// @file
/// What `cflrun report --paper` needs besides the paper's values: how each reference code computed
/// a row's accuracy, the measured evidence behind cells that stay outside the paper's, and the
/// rule that classes each cell (within, outside with evidence, outside, missing).

#include <filesystem>
#include <map>
#include <string>

#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/paper_values.hpp>

namespace cflrun::report {

/// The file beside paper_values.csv naming each algorithm's accuracy definition.
inline constexpr const char* kAccuracyDefinitionsFile = "accuracy_definitions.csv";
/// The file beside paper_values.csv naming the evidence for cells outside the paper's values.
inline constexpr const char* kEvidenceFile = "evidence.csv";
/// A Table 1 cell is within the paper's when |cflrun - paper| <= max(this, the paper's std), in
/// accuracy points.
inline constexpr double kAccuracyTolerancePoints = 2.0;
/// A Table 2 cell is within the paper's when |cflrun - paper| <= this, in ARI.
inline constexpr double kAriTolerance = 0.10;
/// A Table 5 cell (an autoencoder's final test loss, MSE) is within the paper's when
/// |cflrun - paper| <= max(this x the paper's mean, the paper's std): a loss has no absolute scale,
/// so the band is relative (0.20 x 0.016 = 0.003 on CLoVE's Fashion-MNIST cell).
inline constexpr double kTestLossToleranceFraction = 0.20;

/// How a reference code reports a row's test accuracy (Table 1).
enum class AccuracyDefinition {
  kClientMean,      ///< mean over clients of each client's accuracy (CLoVE notebook, PACFL, CFL).
  kSampleWeighted,  ///< correct test samples over test samples of all clients (PFLlib, FlexCFL).
  /// mean over clients of each client's accuracy on its own training samples under the model the
  /// round starts from (the CLoVE notebook's FedAvg row: the accuracy lines it takes are those of
  /// the loss-vector evaluation on the training loaders; clove-official-setup.md Sec. 12).
  kTrainingData,
};

/// The per-run metric that holds a definition's accuracy: kAccuracy, kAccuracyWeighted or
/// kAccuracyTrain.
Metric definition_metric(AccuracyDefinition definition);

/// How a paper cell compares with cflrun's runs.
enum class CellClass { kWithin, kOutsideWithEvidence, kOutside, kMissing };

/// "within", "outside with evidence", "outside", "missing".
const char* cell_class_name(CellClass cell_class);

/// The rule of class within, written from kAccuracyTolerancePoints, kAriTolerance and
/// kTestLossToleranceFraction (so captions and help texts say what classify() does):
/// "accuracy: |cflrun - paper| <= max(2 points, the paper's std); ARI: <= 0.1; test loss: <=
/// max(20 % of the paper's value, its std)".
std::string within_rule_text();

/// The accuracy definitions and the evidence of one paper_values.csv.
struct PaperReferences {
  std::map<std::string, AccuracyDefinition> accuracy;  ///< algorithm -> definition.
  std::map<std::string, std::string> evidence;         ///< cell_key -> where the evidence is.

  /// The definition of `algorithm`'s reference code; client mean where the file names none.
  AccuracyDefinition accuracy_of(const std::string& algorithm) const;
  /// The evidence written for `cell`, or "".
  std::string evidence_for(const PaperValue& cell) const;
};

/// "metric/partition/dataset/algorithm" of a cell.
std::string cell_key(const PaperValue& cell);

/// Reads kAccuracyDefinitionsFile (header `algorithm,accuracy,source`; accuracy client_mean,
/// sample_weighted or training_data) and kEvidenceFile (header
/// `metric,partition,dataset,algorithm,evidence`; the evidence text may hold commas) from the
/// directory of `values_path`; a file that is absent contributes nothing. Lines starting with # are
/// comments.
/// @throws DataError naming the file and line for a wrong header, a row with too few fields or an
///         unknown definition.
PaperReferences read_paper_references(const std::filesystem::path& values_path);

/// The measured statistic of `group` for paper cell `cell`: for accuracy, the definition of the
/// cell's reference code (its definition_metric where the runs recorded it, else the client
/// mean); any other metric as itself.
/// @param used  set to the metric taken.
Statistic measured_for(const RunGroup& group, const PaperValue& cell,
                       const PaperReferences& references, Metric& used);

/// The class of a cell whose runs give `measured`: within (accuracy: |difference| <=
/// max(kAccuracyTolerancePoints, paper std); ARI: <= kAriTolerance; test loss: <=
/// max(kTestLossToleranceFraction x paper mean, paper std); other metrics never),
/// outside with evidence (references hold evidence for it), outside, or missing (no defined run).
CellClass classify(const Statistic& measured, const PaperValue& cell,
                   const PaperReferences& references);

}  // namespace cflrun::report
