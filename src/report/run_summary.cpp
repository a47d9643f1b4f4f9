#include <cflrun/report/run_summary.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include <cflrun/core/error.hpp>
#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/io/file_checksum.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/report/recovery.hpp>

namespace cflrun::report {
namespace {

namespace fs = std::filesystem;

constexpr double kPercent = 100.0;
constexpr const char* kResultExtension = ".h5";
constexpr const char* kPartialExtension = ".partial";
constexpr const char* kUnsupervisedKey = "unsupervised";

std::optional<double> finite(double value) {
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::optional<double> last_finite(const std::vector<double>& series, double scale = 1.0) {
  return series.empty() ? std::nullopt : finite(scale * series.back());
}

/// Table 4 left: ARI of round kAriPercentRound relative to the final ARI, percent.
std::optional<double> ari_percent_at_round(const std::vector<double>& ari) {
  if (ari.size() < static_cast<std::size_t>(kAriPercentRound)) {
    return std::nullopt;
  }
  const double at_round = ari[kAriPercentRound - 1];
  const double final_ari = ari.back();
  if (!std::isfinite(at_round) || !std::isfinite(final_ari) || final_ari == 0.0) {
    return std::nullopt;
  }
  return kPercent * at_round / final_ari;
}

/// Table 4 right: first round (1-based) with ARI >= kAriThreshold. NaN never qualifies.
std::optional<double> first_round_reaching(const std::vector<double>& ari) {
  const auto it = std::find_if(ari.begin(), ari.end(), [](double v) { return v >= kAriThreshold; });
  if (it == ari.end()) {
    return std::nullopt;
  }
  return static_cast<double>(std::distance(ari.begin(), it) + 1);
}

/// The first `rows` values of a per-round dataset, or {} if the file lacks it.
std::vector<double> read_rounds(const io::ResultReader& reader, const char* dataset,
                                std::int64_t rows) {
  if (!reader.has_dataset(dataset)) {
    return {};
  }
  auto values = reader.read_f64(dataset);
  values.resize(std::min(values.size(), static_cast<std::size_t>(std::max<std::int64_t>(rows, 0))));
  return values;
}

/// Whether `path` is a result file: *.h5, or the *.h5.partial of a run in progress or interrupted
/// (read, so that report lists it among the incomplete runs rather than passing over it).
bool is_result_file(const fs::path& path) {
  return path.extension() == kResultExtension ||
         (path.extension() == kPartialExtension && path.stem().extension() == kResultExtension);
}

std::vector<fs::path> result_files_in(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (entry.is_regular_file() && is_result_file(entry.path())) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

RunMetrics compute_run_metrics(const std::vector<double>& ari, const std::vector<double>& accuracy,
                               const std::vector<double>& test_loss, bool unsupervised,
                               const std::vector<double>& accuracy_weighted,
                               const std::vector<double>& accuracy_train) {
  RunMetrics metrics;
  if (!unsupervised) {
    metrics.accuracy_percent = last_finite(accuracy, kPercent);
    metrics.accuracy_weighted_percent = last_finite(accuracy_weighted, kPercent);
    metrics.accuracy_train_percent = last_finite(accuracy_train, kPercent);
  }
  metrics.test_loss = last_finite(test_loss);
  metrics.ari = last_finite(ari);
  metrics.ari_round10_percent = ari_percent_at_round(ari);
  metrics.first_round_ari_0_9 = first_round_reaching(ari);
  return metrics;
}

bool RunSummary::complete() const { return status == io::schema::kStatusComplete; }

bool RunSummary::unsupervised() const {
  const auto it = config.find(kUnsupervisedKey);
  const auto dataset = config.find("dataset");
  const data::DatasetSource* source =
      dataset == config.end() ? nullptr : data::find_dataset_or_null(dataset->second);
  const bool real_valued = source != nullptr && source->targets() == data::TargetKind::kRealValues;
  return (it != config.end() && it->second == "true") || real_valued;
}

RunSummary read_run_summary(const fs::path& path) {
  const auto check = io::check_file_checksum(path);  // first: damage may make the file unreadable
  if (check.state == io::ChecksumState::kDamaged) {
    throw DataError(check.problem + "; run it again with --overwrite");
  }
  const io::ResultReader reader(path);
  RunSummary summary;
  summary.path = path;
  summary.status = reader.status();
  if (summary.complete() && path.extension() == kPartialExtension) {
    summary.status =
        "verified but not yet published (killed before the rename; --resume publishes it)";
  }
  summary.verified = summary.complete() && check.state == io::ChecksumState::kVerified;
  summary.completed_rounds = reader.completed_rounds();
  summary.planned_rounds = reader.planned_rounds();
  for (auto& [name, value] : reader.config()) {
    summary.config.emplace(std::move(name), std::move(value));
  }
  if (summary.complete()) {
    const auto rows = summary.completed_rounds;
    const auto ari = read_rounds(reader, io::schema::kAri, rows);
    const auto accuracy = read_rounds(reader, io::schema::kAccuracy, rows);
    summary.metrics = compute_run_metrics(
        ari, accuracy, read_rounds(reader, io::schema::kTestLoss, rows), summary.unsupervised(),
        read_rounds(reader, io::schema::kAccuracyWeighted, rows),
        read_rounds(reader, io::schema::kAccuracyTrain, rows));
    summary.recoveries = compute_recoveries(read_change_rounds(reader), ari, accuracy);
    summary.metrics.clusters = last_finite(read_rounds(reader, io::schema::kLiveModels, rows));
  }
  return summary;
}

void allow_reading_running_files() { setenv("HDF5_USE_FILE_LOCKING", "FALSE", /*overwrite=*/1); }

std::vector<fs::path> expand_result_inputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  std::set<fs::path> seen;
  auto add = [&](const fs::path& file) {
    if (seen.insert(fs::weakly_canonical(file)).second) {
      files.push_back(file);
    }
  };
  for (const auto& input : inputs) {
    const fs::path path(input);
    if (fs::is_directory(path)) {
      for (const auto& file : result_files_in(path)) {
        add(file);
      }
    } else if (fs::exists(path)) {
      add(path);
    } else {
      throw ConfigError("report input '" + input +
                        "' does not exist; give result files (.h5) or "
                        "directories holding them");
    }
  }
  if (files.empty()) {
    throw ConfigError("no result files (*" + std::string(kResultExtension) +
                      ") in the directories given; check the paths");
  }
  return files;
}

}  // namespace cflrun::report
