#pragma once
/// @file
/// Writes one run's results to an HDF5 file, one row per finished round (schema in
/// results/README.md and <cflrun/io/result_schema.hpp>).

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cflrun::io {

/// A per-round float32 dataset an algorithm adds (its Algorithm::extra_datasets()), e.g.
/// /clients/importance [T, M, K] (FedSoft) or /algorithm/cfl_max_update_norm [T, K] (CFL).
struct ExtraDatasetLayout {
  std::string path;                  ///< absolute path; a missing parent group is created.
  std::vector<std::int64_t> shape;   ///< shape of one round's row, every extent >= 1.
};

/// The sizes fixed for a whole run, which set the shape of every per-round dataset.
struct ResultLayout {
  int num_clients = 0;            ///< M >= 1, columns of /clients/* datasets.
  int num_models = 0;             ///< K >= 1, models; columns of /clients/loss_vectors.
  bool has_loss_vectors = false;  ///< whether the algorithm computes loss vectors (CLoVE, IFCA).
  std::vector<std::string> phase_names;  ///< P >= 1 timing phases, columns of /rounds/seconds.
  std::int64_t planned_rounds = 0;       ///< rounds the run intends to do (>= 0).
  int num_sources = 0;            ///< S >= 0 source distributions of a mixture partition (0: none).
  std::vector<ExtraDatasetLayout> extra_datasets;  ///< the algorithm's own per-round datasets.
};

/// Everything recorded about one finished round (CLoVE paper Sec. 5 / Tables 1-2 metrics).
struct RoundRecord {
  double ari = 0.0;  ///< adjusted Rand index of assignment vs true clusters (NaN if undefined).
  double accuracy = 0.0;    ///< mean over clients of test accuracy on the assigned model, fraction.
  double test_loss = 0.0;   ///< mean over clients of test loss on the assigned model.
  double train_loss = 0.0;  ///< mean over clients of training loss of this round's local updates.
  double worker_compute_seconds = 0.0;  ///< max over ranks of seconds in torch forward/backward.
  std::int64_t bytes_sent = 0;          ///< server to clients this round (bytes, logical FL traffic).
  std::int64_t bytes_received = 0;      ///< clients to server this round (bytes, logical FL traffic).
  std::vector<double> seconds;          ///< [P] wall-clock seconds of each phase, layout order.
  std::vector<int> assignment;          ///< [M] model trained by each client, in [0, K).
  std::vector<float> loss_vectors;      ///< [M * K] row-major (CLoVE Alg. 1), empty if none.
  std::vector<float> client_accuracy;   ///< [M] test accuracy of each client, fraction.
  std::vector<float> client_test_loss;  ///< [M] test loss of each client.
  int live_models = 0;                  ///< models the algorithm maintains this round, <= K (CFL grows it).
  /// Values of the layout's extra datasets: path -> row-major values of one row.
  std::map<std::string, std::vector<float>> extra;
  std::vector<float> source_accuracy;   ///< [K * S] row-major holdout accuracy of model j on source s, empty if S = 0.
  std::vector<float> source_loss;       ///< [K * S] row-major holdout mean loss, empty if S = 0.
};

/// Owns one result file while a run writes it. Rank 0 is the single writer (serial HDF5).
///
/// The file is written in place at its final path and flushed after every round, so a run that
/// is killed leaves a readable file holding every finished round (status stays "running").
/// Not copyable; movable (a moved-from writer may only be destroyed or assigned to). Destroying
/// the writer closes the file without changing `status`: call `mark_complete` or `mark_failed`
/// first. After an Hdf5Error from `append_round` the datasets may differ in length: call only
/// `mark_failed`.
class ResultWriter {
 public:
  /// Creates the file (and its parent directories) with every group and every per-round dataset
  /// at zero rows, `status` = "running", `completed_rounds` = 0.
  /// @param path       the `--out` file.
  /// @param layout     the run's sizes.
  /// @param overwrite  replace an existing file (`--overwrite`).
  /// @throws ConfigError if `path` exists and `overwrite` is false (the existing file is not
  ///         touched), or its parent directory cannot be created.
  /// @throws ShapeError if a size in `layout` is out of range (see ResultLayout).
  /// @throws Hdf5Error if HDF5 cannot create the file or its datasets.
  ResultWriter(const std::filesystem::path& path, const ResultLayout& layout, bool overwrite);

  /// Reopens the file of an interrupted run to continue it after round `rounds` (--resume): every
  /// per-round dataset is cut to `rounds` rows (rounds written after the checkpoint are redone),
  /// `completed_rounds` = rounds, `status` = "running".
  /// @throws DataError if the file was made for another number of clients or models, or holds
  ///         fewer rows than `rounds`; Hdf5Error if HDF5 cannot open or change it.
  static ResultWriter resume(const std::filesystem::path& path, const ResultLayout& layout, std::int64_t rounds);
  ~ResultWriter();
  ResultWriter(ResultWriter&&) noexcept;
  ResultWriter& operator=(ResultWriter&&) noexcept;
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  /// Writes each (name, value) as a string attribute of /config (options, version, git_commit,
  /// torch_version, ranks, blas, ...), replacing attributes of the same name; then flushes.
  /// @throws Hdf5Error if HDF5 cannot write an attribute.
  void write_config(const std::vector<std::pair<std::string, std::string>>& attributes);

  /// Writes /clients/true_cluster, [M] int32, the ground-truth cluster of each client; flushes.
  /// @throws ShapeError if `true_cluster` does not hold M values.
  /// @throws Hdf5Error if HDF5 cannot write it.
  void write_true_clusters(const std::vector<int>& true_cluster);

  /// Writes /clients/mixture, [M, S] float64 row-major: the share of each source in each
  /// client's data (mixture partitions, FedSoft Sec. 5); flushes.
  /// @throws ShapeError if the layout has no sources or `mixture` does not hold M x S values.
  /// @throws Hdf5Error if HDF5 cannot write it.
  void write_mixture(const std::vector<double>& mixture);

  /// Appends one finished round: extends every per-round dataset by one row, sets
  /// `completed_rounds` to the new row count, and flushes the file to disk.
  /// @throws ShapeError if a vector in `record` has the wrong size for the layout (nothing is
  ///         written then).
  /// @throws Hdf5Error if HDF5 cannot write or flush.
  void append_round(const RoundRecord& record);

  /// Rows appended so far (equals the file's `completed_rounds`).
  std::int64_t completed_rounds() const;

  /// Writes the run's table figures as float64 attributes of /summary (NaN where undefined),
  /// e.g. final_accuracy, final_ari, ari_round10_percent, first_round_ari_0_9 (CLoVE paper
  /// Tables 1, 2, 4), then flushes. Call before mark_complete().
  /// @throws Hdf5Error if the group or an attribute cannot be written.
  void write_summary(const std::vector<std::pair<std::string, double>>& figures);

  /// Sets `status` to "complete" and flushes.
  /// @throws Hdf5Error if HDF5 cannot write or flush.
  void mark_complete();

  /// Sets `status` to "complete", closes the file, flushes it to disk (fsync) and renames it to
  /// `final_path` in one step (the run's --out; it replaces an older file there only at this
  /// moment, so a complete file is never seen half written). The writer is closed afterwards.
  /// @throws Hdf5Error if the status cannot be written or the rename fails (the message names
  ///         where the complete result is).
  void complete_into(const std::filesystem::path& final_path);

  /// Sets `status` to "interrupted: <message>" (a signal stopped the run; --resume continues it)
  /// and flushes. Never throws, as mark_failed.
  void mark_interrupted(const std::string& message) noexcept;

  /// Sets `status` to "failed: <message>" and flushes. Never throws: it runs while another error
  /// is being reported, and a failure to record the failure is ignored.
  void mark_failed(const std::string& message) noexcept;

 private:
  ResultWriter();
  /// Sets `status`, ignoring failures (mark_failed, mark_interrupted).
  void set_status_best_effort(const std::string& status) noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cflrun::io
