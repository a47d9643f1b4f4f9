// Rank 0's result file: opened afresh at set-up (with a resumed run's rounds), completed after the
// last round, marked interrupted or failed otherwise.
#include "round_recorder.hpp"

#include <filesystem>
#include <limits>
#include <optional>
#include <system_error>

#include <cflrun/io/result_schema.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/run/client_data_setup.hpp>

namespace cflrun::run::detail {

void RoundRecorder::open(const algo::Algorithm& algorithm, int num_models,
                         const std::vector<std::pair<std::string, std::string>>& attributes) {
  io::ResultLayout layout;
  layout.num_clients = num_clients();
  layout.num_models = num_models;
  layout.has_loss_vectors = algorithm.traits().records_loss_vectors;
  layout.phase_names.assign(std::begin(kPhaseNames), std::end(kPhaseNames));
  layout.planned_rounds = options_.rounds;
  layout.num_sources = holdouts_ ? holdouts_->size() : 0;
  layout.changing_population = population_ != nullptr;
  layout.has_train_accuracy = options_.train_accuracy;
  for (const auto& dataset : algorithm.extra_datasets()) {
    layout.extra_datasets.push_back({dataset.path, dataset.shape});
  }
  writer_ = std::make_unique<io::ResultWriter>(paths_.partial, layout, /*overwrite=*/true);
  try {
    writer_->write_config(attributes);
    if (population_ != nullptr) {  // per round instead
      writer_->write_change_rounds(population_->change_rounds());
    } else {
      writer_->write_true_clusters(true_clusters_);
    }
    if (!mixture_.empty()) {
      writer_->write_mixture(mixture_);
    }
  } catch (...) {  // a full disk between creation and the first round: no unreadable file stays
    discard_partial();
    throw;
  }
}

void RoundRecorder::discard_partial() noexcept {
  writer_.reset();
  std::error_code ignored;
  std::filesystem::remove(paths_.partial, ignored);
}

std::int64_t RoundRecorder::append_rows(const io::NamedTensors& rows) {
  writer_->append_rows(rows);
  return writer_->completed_rounds();
}

bool RoundRecorder::complete(double stability_switch_round) {
  if (!writer_) {
    return false;
  }
  const auto metrics = report::compute_run_metrics(
      ari_series_, accuracy_series_, test_loss_series_,
      /*unsupervised=*/objective_of(options_) != model::Objective::kClassification);
  const auto value = [](const std::optional<double>& v) {
    return v.value_or(std::numeric_limits<double>::quiet_NaN());
  };
  // The last round's accuracy itself: accuracy_percent / 100 need not give back the same double.
  const double final_accuracy =
      metrics.accuracy_percent ? accuracy_series_.back() : std::numeric_limits<double>::quiet_NaN();
  const double final_accuracy_weighted = metrics.accuracy_percent
                                             ? accuracy_weighted_series_.back()
                                             : std::numeric_limits<double>::quiet_NaN();
  writer_->write_summary({{"final_accuracy", final_accuracy},
                          {"final_accuracy_weighted", final_accuracy_weighted},
                          {"final_test_loss", test_loss_series_.back()},
                          {"final_ari", value(metrics.ari)},
                          {"ari_round10_percent", value(metrics.ari_round10_percent)},
                          {"first_round_ari_0_9", value(metrics.first_round_ari_0_9)},
                          {"stability_switch_round", stability_switch_round}});
  writer_->complete_into(paths_.out);  // <out>.partial becomes <out> in one rename
  writer_.reset();
  return true;
}

void RoundRecorder::mark_interrupted(const std::string& message) noexcept {
  if (writer_) {
    writer_->mark_interrupted(message);
  }
}

void RoundRecorder::fail(const std::string& message) {
  if (!writer_ ||
      !writer_->is_open()) {  // closed by a complete_into that failed: its error names the file
    return;
  }
  if (writer_->completed_rounds() == 0) {  // nothing worth keeping: no file that could mislead
    discard_partial();
    return;
  }
  writer_->mark_failed(message);
}

}  // namespace cflrun::run::detail
