#pragma once
// Private to src/run: rank 0's record of a run (round_recorder.cpp, round_recorder_file.cpp).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/cli/run_options.hpp>
#include <cflrun/comm/communicator.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/io/result_rows.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/run/model_set.hpp>
#include <cflrun/run/output_files.hpp>
#include <cflrun/run/population/population_schedule.hpp>
#include <cflrun/run/source_holdouts.hpp>

#include "round_outcome.hpp"

namespace cflrun::run::detail {

/// What the record of a round reads of the round driver's state on rank 0 (borrowed, not owned).
struct RecordSources {
  const algo::Algorithm& algorithm;        // its traffic and extra datasets
  ModelSet& models;                        // sizes; scored on the sources' holdout sets
  const algo::ClientStatistic* statistic;  // the algorithm's own statistic, or null
  int num_models;                          // K
};

/// Rank 0's record of a run: the result file (<out>.partial, renamed to <out> when complete), the
/// data's true clusters and, for mixture partitions, the sources' holdout sets and the clients'
/// true shares; per round the metrics, traffic, loss vectors and holdout scores it writes, and the
/// ARI / accuracy / test-loss series behind the progress line, the summary and the checkpoint.
/// Nothing here is collective: every rank holds one, but only rank 0's opens a file and records
/// (set_up on the other ranks keeps only the true clusters; the driver calls the rest on rank 0).
/// @throws Hdf5Error if the file cannot be written, ShapeError if a round's record does not fit
///         the file's layout (io::ResultWriter); after either the driver calls fail().
class RoundRecorder {
 public:
  RoundRecorder(const cli::RunOptions& options, const comm::Communicator& comm, OutputPaths paths)
      : options_(options), comm_(comm), paths_(std::move(paths)) {}

  /// Every rank: the data's true clusters; rank 0, mixture partitions: also every source's holdout
  /// set (on `device`) and the clients' true shares.
  void set_up(const data::ClientData& data, torch::Device device);
  /// A changing population (issue 45): the truth and presence recorded every round, the change
  /// rounds written at open. `schedule` must outlive the recorder's use.
  void set_population(const PopulationSchedule* schedule) { population_ = schedule; }
  /// M, the number of clients, on every rank.
  int num_clients() const { return static_cast<int>(true_clusters_.size()); }

  /// Rank 0: creates <out>.partial afresh, writes `attributes` as /config, the true clusters and
  /// the mixture shares. @throws Hdf5Error if the file cannot be written (a full disk), after
  /// removing what was made of it.
  void open(const algo::Algorithm& algorithm, int num_models,
            const std::vector<std::pair<std::string, std::string>>& attributes);
  /// Rank 0, --resume: appends a checkpoint's rounds to the fresh file; returns the rounds it then
  /// holds.
  std::int64_t append_rows(const io::NamedTensors& rows);
  /// Rank 0: the file's rounds so far (io::ResultWriter::kept_rows), for a checkpoint.
  io::NamedTensors kept_rows() const { return writer_->kept_rows(); }

  /// Rank 0, after a round: records its metrics and traffic, scores the sources' holdout sets,
  /// appends the row (flushed), extends the series and prints the progress line (unless --quiet).
  /// `evaluations` is the gather of every rank's kClientFields per hosted client and its compute
  /// seconds; `start` is the clock of the round's last phase (io), which this closes.
  void record(int round, RoundOutcome& outcome, const std::vector<double>& evaluations,
              const RecordSources& sources, Clock& start);

  /// The series a checkpoint keeps (rank 0): ARI, accuracy, test loss and the total seconds.
  algo::AlgorithmState state() const;
  /// Restores what state() returned. @throws DataError if a series is missing (algo::state_tensor).
  void restore(const algo::AlgorithmState& state);

  /// Rank 0, after the last round: writes the summary (`stability_switch_round` is 1-based, or
  /// NaN) and renames <out>.partial to <out>. Returns false where no file is open (other ranks).
  bool complete(double stability_switch_round);
  /// Marks the open file interrupted by `message` (a signal); nothing without one. Never throws.
  void mark_interrupted(const std::string& message) noexcept;
  /// Marks the open file failed with `message`, or removes it if it holds no round yet (a file
  /// that could mislead). Nothing without an open file.
  void fail(const std::string& message);

 private:
  /// Closes the open file and removes <out>.partial. Never throws.
  void discard_partial() noexcept;
  void record_clients(const RoundOutcome& outcome, const std::vector<double>& evaluations,
                      const algo::Algorithm& algorithm, io::RoundRecord& rec) const;
  algo::RoundFacts round_facts(const RoundOutcome& outcome, const RecordSources& sources) const;
  void record_loss_vectors(const RoundOutcome& outcome, const RecordSources& sources,
                           io::RoundRecord& rec) const;
  void publish(int round, RoundOutcome& outcome, ModelSet& models, io::RoundRecord& rec,
               Clock& start);

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  OutputPaths paths_;
  std::vector<int> true_clusters_;                  // [M] every rank
  const PopulationSchedule* population_ = nullptr;  // a changing population's, else null
  std::unique_ptr<io::ResultWriter> writer_;        // rank 0, once open
  std::unique_ptr<SourceHoldouts> holdouts_;  // rank 0, mixture partitions: every source's holdout
  std::vector<double> mixture_;               // rank 0, mixture partitions: [M * S] true shares
  std::vector<double> ari_series_, accuracy_series_, accuracy_weighted_series_,
      test_loss_series_;        // per round, rank 0
  double total_seconds_ = 0.0;  // rank 0
};

}  // namespace cflrun::run::detail
