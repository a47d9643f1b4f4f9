#pragma once
/// @file
/// One result file reduced to what the report tables need: its status, its /config and its
/// final-round metrics, computed as the official CLoVE notebook computes the paper's tables
/// (CLoVE paper Tables 1, 2, 4 and 5; clove-official-setup.md Sec. 12).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cflrun/report/recovery.hpp>

namespace cflrun::report {

/// Round (1-based) whose ARI Table 4 relates to the final ARI ("% of final ARI reached in 10
/// rounds"). The official notebook says "ARI at round index 10"; we read it as the 10th round.
inline constexpr int kAriPercentRound = 10;

/// ARI a run must reach for Table 4's "first round when ARI >= 90%".
inline constexpr double kAriThreshold = 0.9;

/// Final metrics of one run. A metric is nullopt where the paper's table shows "-".
struct RunMetrics {
  /// 100 x /rounds/accuracy of the last round (percent; Table 1). nullopt for unsupervised runs,
  /// without rounds, or if the value is not finite.
  std::optional<double> accuracy_percent;
  /// 100 x /rounds/accuracy_weighted of the last round: correct test samples over test samples
  /// (PFLlib's and FlexCFL's definition), percent. nullopt as accuracy_percent, and for files
  /// written before the dataset existed.
  std::optional<double> accuracy_weighted_percent;
  /// 100 x /rounds/accuracy_train of the last round: the clients' training-data accuracy under the
  /// model the round starts from, mean over clients (--train-accuracy; the CLoVE notebook's FedAvg
  /// definition), percent. nullopt as accuracy_percent, and for runs without --train-accuracy.
  std::optional<double> accuracy_train_percent;
  /// /rounds/test_loss of the last round (Table 5 for unsupervised runs). nullopt without rounds
  /// or if not finite.
  std::optional<double> test_loss;
  /// /rounds/ari of the last round (Table 2). nullopt if NaN (FedAvg, Local-only) or no rounds.
  std::optional<double> ari;
  /// 100 x ARI(round kAriPercentRound) / ARI(last round), percent (Table 4, left). nullopt with
  /// fewer than kAriPercentRound rounds, if either ARI is NaN, or if the final ARI is 0.
  std::optional<double> ari_round10_percent;
  /// First round, 1-based, whose ARI is >= kAriThreshold (Table 4, right); nullopt if none.
  std::optional<double> first_round_ari_0_9;
  /// /rounds/live_models of the last round: the models (clusters) the algorithm maintained, e.g.
  /// CFL's grown cluster count. nullopt for files written before the dataset existed.
  std::optional<double> clusters;
};

/// Computes the final metrics of one run from its per-round series (each [T], row t = round t+1).
/// @param ari           [T] ARI per round, NaN where undefined.
/// @param accuracy      [T] mean test accuracy per round, fraction in [0, 1]; may be empty.
/// @param test_loss     [T] mean test loss per round; may be empty.
/// @param unsupervised  true if the run trains without labels: accuracy is then left undefined.
/// @param accuracy_weighted  [T] sample-weighted test accuracy per round, fraction; may be empty.
/// @param accuracy_train     [T] training-data accuracy at each round's start, fraction; may be
///                           empty.
/// Series of different lengths are allowed; each metric uses its own series' last value.
RunMetrics compute_run_metrics(const std::vector<double>& ari, const std::vector<double>& accuracy,
                               const std::vector<double>& test_loss, bool unsupervised,
                               const std::vector<double>& accuracy_weighted = {},
                               const std::vector<double>& accuracy_train = {});

/// One result file as the report sees it.
struct RunSummary {
  std::filesystem::path path;                 ///< the file read.
  std::string status;                         ///< root `status`: running | complete | failed: ...
  std::int64_t completed_rounds = 0;          ///< rows written (finished rounds).
  std::int64_t planned_rounds = 0;            ///< rounds the run intended to do.
  std::map<std::string, std::string> config;  ///< every /config attribute, name -> value text.
  RunMetrics metrics;                         ///< computed for complete runs only; else empty.
  /// For complete runs of a changing population: the recovery after each change round
  /// (/population/change_rounds, compute_recoveries); empty for other runs and runs.csv rows.
  std::vector<ChangeRecovery> recoveries;
  /// For complete runs: true if the file's whole-file checksum was verified
  /// (io::check_file_checksum); false for a complete file written before cflrun sealed its files,
  /// which cannot be verified.
  bool verified = false;

  /// True if `status` is "complete": only complete runs enter the statistics.
  bool complete() const;
  /// True if the run has no accuracy: config `unsupervised` is "true", or `dataset` names a
  /// registered dataset of real-valued targets (linreg: regression); the final test loss then
  /// replaces accuracy.
  bool unsupervised() const;
};

/// Reads one result file (schema in results/README.md). The metrics and recoveries are computed
/// from the first `completed_rounds` rows, and only if the run is complete. The file's checksum (if
/// sealed) is checked first; a `<out>.partial` is never complete (status "complete" there means a
/// kill came between verification and publishing, which --resume finishes).
/// @throws DataError if `path` does not exist, is not an HDF5 result file or lacks an attribute,
///         does not match its checksum (damaged: the message names it), or holds change rounds
///         that are not 1-based and increasing (compute_recoveries).
/// @throws Hdf5Error if HDF5 cannot open or read it (e.g. a running job's lock, see
///         allow_reading_running_files).
RunSummary read_run_summary(const std::filesystem::path& path);

/// Sets HDF5_USE_FILE_LOCKING=FALSE in this process's environment, so that files a running job
/// holds open can be opened (read-only) to report their status (results/README.md, Storage).
/// HDF5 reads the variable at each file open. Changes process-wide state: call it from a
/// command's entry point only.
void allow_reading_running_files();

/// Expands the report's inputs: a file is taken as is (a result file, or a runs.csv of per-run
/// rows: run_rows_csv.hpp); a directory contributes every regular `*.h5` file inside it or its
/// subdirectories (a sweep of sweeps), sorted by path. A file named twice is read once.
/// @return the files, in input order (each directory's files sorted).
/// @throws ConfigError if an input does not exist, or if no file is found at all.
std::vector<std::filesystem::path> expand_result_inputs(const std::vector<std::string>& inputs);

}  // namespace cflrun::report
