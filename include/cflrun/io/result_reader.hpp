#pragma once
/// @file
/// Reads a result file written by ResultWriter (schema in results/README.md), for tests and for
/// reports.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cflrun::io {

/// A result file opened read-only. Not copyable; movable.
///
/// Dataset names are absolute or relative to the root, e.g. "/rounds/ari" (see
/// <cflrun/io/result_schema.hpp>). Numeric reads convert to the requested type as HDF5 does, and
/// return every row in the file, flattened row-major.
class ResultReader {
 public:
  /// Opens `path` read-only.
  /// @throws DataError naming `path` if it does not exist or is not an HDF5 file.
  /// @throws Hdf5Error naming `path` if HDF5 cannot open it (e.g. a running job holds its lock).
  explicit ResultReader(const std::filesystem::path& path);
  ~ResultReader();
  ResultReader(ResultReader&&) noexcept;
  ResultReader& operator=(ResultReader&&) noexcept;
  ResultReader(const ResultReader&) = delete;
  ResultReader& operator=(const ResultReader&) = delete;

  /// Every attribute of /config as (name, value), sorted by name.
  /// @throws DataError if /config is missing or an attribute is not a string.
  std::vector<std::pair<std::string, std::string>> config() const;

  /// The value of one /config attribute.
  /// @throws DataError if there is no such attribute (the message lists the ones present).
  std::string config_value(const std::string& name) const;

  /// Root attribute `completed_rounds`: rows written (finished rounds).
  /// @throws DataError if the attribute is missing or not an integer.
  std::int64_t completed_rounds() const;

  /// A scalar float64 attribute of a group, e.g. ("/summary", "final_ari").
  /// @throws DataError if the group or attribute is missing or not one float.
  double read_f64_attribute(const std::string& group, const std::string& name) const;

  /// Root attribute `planned_rounds`. @throws DataError if missing or not an integer.
  std::int64_t planned_rounds() const;

  /// Root attribute `status`: "running", "complete" or "failed: <message>".
  /// @throws DataError if missing or not a string.
  std::string status() const;

  /// The `phases` attribute of /rounds/seconds: [P] phase names, the columns of that dataset.
  /// @throws DataError if the dataset or attribute is missing.
  std::vector<std::string> phase_names() const;

  /// True if `path` names a dataset (not a group) in the file.
  bool has_dataset(const std::string& path) const;

  /// Reads a whole dataset of any rank as float64, flattened row-major.
  /// @param shape  if not null, receives the extent of each dimension ({} for a scalar).
  /// @throws DataError if there is no such dataset. @throws Hdf5Error if it cannot be read.
  std::vector<double> read_f64(const std::string& dataset,
                               std::vector<std::size_t>* shape = nullptr) const;

  /// As read_f64, as float32.
  std::vector<float> read_f32(const std::string& dataset,
                              std::vector<std::size_t>* shape = nullptr) const;

  /// As read_f64, as int32.
  std::vector<int> read_i32(const std::string& dataset,
                            std::vector<std::size_t>* shape = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cflrun::io
