#pragma once
/// @file
/// Writes one run's results to an HDF5 file, one row per finished round (schema in
/// results/README.md and <cflrun/io/result_schema.hpp>).

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cflrun/io/tensor_store.hpp>

namespace cflrun::io {

/// A per-round float32 dataset an algorithm adds (its Algorithm::extra_datasets()), e.g.
/// /clients/importance [T, M, K] (FedSoft) or /algorithm/cfl_max_update_norm [T, K] (CFL).
struct ExtraDatasetLayout {
  std::string path;                 ///< absolute path; a missing parent group is created.
  std::vector<std::int64_t> shape;  ///< shape of one round's row, every extent >= 1.
};

/// The sizes fixed for a whole run, which set the shape of every per-round dataset.
struct ResultLayout {
  int num_clients = 0;            ///< M >= 1, columns of /clients/* datasets.
  int num_models = 0;             ///< K >= 1, models; columns of /clients/loss_vectors.
  bool has_loss_vectors = false;  ///< whether the algorithm computes loss vectors (CLoVE, IFCA).
  std::vector<std::string> phase_names;  ///< P >= 1 timing phases, columns of /rounds/seconds.
  std::int64_t planned_rounds = 0;       ///< rounds the run intends to do (>= 0).
  int num_sources = 0;  ///< S >= 0 source distributions of a mixture partition (0: none).
  std::vector<ExtraDatasetLayout> extra_datasets;  ///< the algorithm's own per-round datasets.
  /// A population that changes over the rounds (issue 45): /clients/true_cluster and
  /// /clients/available are per-round [T, M] datasets instead of the one [M] truth.
  bool changing_population = false;
  bool has_train_accuracy = false;  ///< /rounds/accuracy_train is recorded (--train-accuracy).
};

/// Everything recorded about one finished round (CLoVE paper Sec. 5 / Tables 1-2 metrics): the row
/// of every per-round dataset of the run's layout, by path. The run-level datasets (ARI, accuracy,
/// losses, traffic, timings, assignment, loss vectors, ...) are declared once, with their element
/// type and row shape, in src/io/round_fields.cpp (paths in <cflrun/io/result_schema.hpp>,
/// documented in results/README.md); an algorithm's own are its extra datasets (float32 rows of
/// their shape). ResultWriter::append_round checks a record against the layout: every dataset set,
/// with its type and value count, and nothing else.
class RoundRecord {
 public:
  /// Sets the row of dataset `path` to one number (a dataset of one value per round).
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  void set(const std::string& path, T value) {
    set(path, std::vector<T>{value});
  }
  /// Sets the row of dataset `path` to `values`, row-major (e.g. [M * K] for [M, K] rows); the
  /// element type is T's: double float64, float float32, int int32, std::int64_t int64.
  template <typename T>
  void set(const std::string& path, const std::vector<T>& values) {
    rows_[path] =
        torch::from_blob(const_cast<T*>(values.data()), {static_cast<std::int64_t>(values.size())},
                         c10::CppTypeToScalarType<T>::value)
            .clone();
  }
  /// The row of `path`, [values] of its element type (contiguous, CPU), or nullptr if unset.
  const torch::Tensor* find(const std::string& path) const;
  /// The single value of a one-value row as a double, e.g. number(schema::kAri).
  /// @throws ShapeError if `path` is unset or its row does not hold exactly one value.
  double number(const std::string& path) const;
  /// Every row set, by path.
  const NamedTensors& rows() const { return rows_; }

 private:
  NamedTensors rows_;
};

/// Owns one result file while a run writes it. Rank 0 is the single writer (serial HDF5).
///
/// The file is written in place (the run's `<out>.partial`) and flushed after every round, so a
/// run that is killed leaves a file holding its finished rounds (status stays "running"); the
/// writer also keeps a copy of every row in memory (kept_rows), which a checkpoint carries, so that
/// --resume never depends on a file a kill may have left half written. Not copyable; movable (a
/// moved-from writer may only be destroyed or assigned to). Destroying the writer closes the file
/// without changing `status`: call `complete_into` or `mark_failed` first. `append_round` reserves
/// the round's growth on the disk first (reserve_file_space), so a full disk stops it before any
/// dataset grows; after an Hdf5Error from it call only `mark_failed`.
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

  /// Writes /population/change_rounds, [C] int32: the 1-based rounds at which the population
  /// changes (a changing population, issue 45); flushes.
  /// @throws ShapeError if the layout is not a changing population's.
  /// @throws Hdf5Error if HDF5 cannot write it.
  void write_change_rounds(const std::vector<int>& rounds);

  /// Writes /clients/mixture, [M, S] float64 row-major: the share of each source in each
  /// client's data (mixture partitions, FedSoft Sec. 5); flushes.
  /// @throws ShapeError if the layout has no sources or `mixture` does not hold M x S values.
  /// @throws Hdf5Error if HDF5 cannot write it.
  void write_mixture(const std::vector<double>& mixture);

  /// Appends one finished round: reserves disk space for it, extends every per-round dataset by one
  /// row, sets `completed_rounds` to the new row count, and flushes the file to disk.
  /// @throws ShapeError if a vector in `record` has the wrong size for the layout (nothing is
  ///         written then).
  /// @throws Hdf5Error if HDF5 cannot write or flush.
  void append_round(const RoundRecord& record);

  /// Appends the rounds of an interrupted run, as kept_rows() returned them (from a checkpoint,
  /// --resume), one round at a time as append_round does.
  /// @param rows  dataset path -> [T, row shape...] tensor of the dataset's type, the same T for
  /// all.
  /// @throws DataError if a dataset of the layout is missing from `rows` or has another type, row
  ///         shape or number of rounds (nothing is written then); Hdf5Error if HDF5 cannot write.
  void append_rows(const NamedTensors& rows);

  /// Every round appended so far: dataset path (e.g. "/rounds/ari") -> [T, row shape...] tensor in
  /// the dataset's type (float64, int64, int32 or float32), T = completed_rounds().
  NamedTensors kept_rows() const;

  /// Rows appended so far (equals the file's `completed_rounds`). Only while is_open().
  std::int64_t completed_rounds() const;

  /// False once complete_into has closed the file (also when it threw).
  bool is_open() const { return impl_ != nullptr; }

  /// Writes the run's table figures as float64 attributes of /summary (NaN where undefined),
  /// e.g. final_accuracy, final_ari, ari_round10_percent, first_round_ari_0_9 (CLoVE paper
  /// Tables 1, 2, 4), then flushes. Call before complete_into().
  /// @throws Hdf5Error if the group or an attribute cannot be written.
  void write_summary(const std::vector<std::pair<std::string, double>>& figures);

  /// Sets `status` to "complete", closes the file, verifies it on disk (every round read back
  /// equals the rows appended, row_difference), seals it with a whole-file checksum (seal_file,
  /// which flushes it to disk) and checks the seal by reading it back, then renames it to
  /// `final_path` in one step (the run's --out; it replaces an older file there only at this
  /// moment, so a complete file is never seen half written or unverified). The writer is closed
  /// afterwards. A kill at any point before the rename leaves the old --out untouched.
  /// @throws Hdf5Error if the status cannot be written, the file read back differs (its status is
  ///         then "failed: verification failed: ..."), the seal fails, or the rename fails (the
  ///         message names where the file is).
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
